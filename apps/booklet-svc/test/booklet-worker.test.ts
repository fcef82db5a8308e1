import { randomBytes, randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import {
  MAX_BATCH_ITEMS,
  QueueGroups,
  Streams,
  Subjects,
  type Beneficiary,
  type InstallmentView,
} from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import { OutboxRelay } from '@payments/outbox';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { BookletsDatabase } from '../src/db/schema';
import { bookletPageCount } from '../src/domain/booklet-layout';
import { requestBooklet } from '../src/domain/booklet-requests';
import { PostgresPdfStore } from '../src/db/booklet-files';
import { BusInstallmentSource } from '../src/transport/bus-sources';
import { startWorkers } from '../src/transport/workers';
import { barcodeFor, pixCode, typeableLineFor } from './slip-fixtures';

/**
 * The build worker on a real bus and Postgres, with the largest booklet one create request can make
 * (MAX_BATCH_ITEMS installments): the render yields to the event loop often enough that the bus's
 * in-progress heartbeats go out, so a short ack wait holds the job for the whole build, and a killed
 * instance's build is taken over within one ack wait.
 */

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const silent = createLogger('booklet-worker-test', 'silent');
/** Heartbeats every second; a stall of 2 s or more (the bound below) would let the job be redelivered. */
const TEST_ACK_WAIT_MS = 3_000;
/** The longest stall allowed: measured 0.25-0.5 s on a loaded 2-core machine; generous for CI. */
const MAX_STALL_MS = 2_000;

const beneficiary: Beneficiary = {
  name: 'Escola Técnica Horizonte Ltda',
  tax_id: '12345678000195',
  city: 'São Paulo',
  pix_key: '+5511999990000',
  agency: null,
  account: null,
  address: 'Rua das Acácias, 100',
};

/** n registered installments, monthly, every seventh PIX-only (no barcode). */
function installments(n: number): InstallmentView[] {
  return Array.from({ length: n }, (_, i) => {
    const k = i + 1;
    const dueDate = new Date(Date.UTC(2027, i, 10)).toISOString().slice(0, 10);
    const amountCents = 25_000 + k;
    const barcode =
      k % 7 === 0 ? null : barcodeFor(amountCents, dueDate, `${String(k).padStart(10, '0')}987654321098765`);
    return {
      account_receivable_id: `ar-${k}`,
      due_date: dueDate,
      amount_cents: amountCents,
      instructions: ['Após o vencimento, cobrar multa de 2,00%.', 'Juros de R$ 0,08 por dia de atraso.'],
      state: 'pending',
      payment_date: null,
      registered: true,
      our_number: `10900${String(k).padStart(7, '0')}`,
      typeable_line: barcode ? typeableLineFor(barcode) : null,
      barcode,
      pix_copy_and_paste: pixCode(String(k).padStart(26, '0'), amountCents),
      payer: {
        name: 'Maria da Conceição Araújo',
        cnpj_cpf: '12345678909',
        address: 'Av. Brasil, 2500',
        number: '31',
        neighborhood: 'Centro',
        city: 'Campinas',
        state: 'SP',
        zip_code: '13000000',
      },
    };
  });
}

let drop: () => Promise<void>;
let db: Kysely<BookletsDatabase>;
let bus: Bus;
let receivables: Bus;
let relay: OutboxRelay<BookletsDatabase>;
let stopWorkers: () => Promise<void>;
/** How many installments receivables-svc answers for each payment slip id. */
const sizes = new Map<string, number>();

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  db = createDatabase<BookletsDatabase>({ url: database.url, schema: SCHEMA, applicationName: 'booklet-worker-test' });
  await migrateToLatest(db, SCHEMA, migrations);
  const prefix = `t${randomBytes(5).toString('hex')}`;
  bus = await connectBus({ url: NATS_URL, prefix, name: 'test-booklet-svc', logger: silent });
  // receivables-svc as booklet-svc sees it: the installments over the bus (a reply of about 1 MB).
  receivables = await connectBus({ url: NATS_URL, prefix, name: 'test-receivables-svc', logger: silent });
  receivables.serve(
    Subjects.receivables.installments,
    (cmd) => Promise.resolve({ installments: installments(sizes.get(cmd.payment_slip_id) ?? 0), payee: beneficiary }),
    { queue: QueueGroups.receivables },
  );
  await receivables.connection.flush();
  await bus.streams.provisionWith({ ackWaitMs: TEST_ACK_WAIT_MS }, Streams.bookletBuilds, Streams.callbackRequests);
  relay = new OutboxRelay({ db, bus, streams: [Streams.bookletBuilds, Streams.callbackRequests], logger: silent });
  relay.start();
  const workers = await startWorkers(bus, {
    db,
    source: new BusInstallmentSource(bus),
    store: new PostgresPdfStore(db),
    links: (id) => `https://api.example.com/downloads/${id}`,
    logger: silent,
    maxWaitMs: 60_000,
    onEnqueued: () => relay.wake(),
    ackWaitMs: TEST_ACK_WAIT_MS,
  });
  stopWorkers = async () => {
    await Promise.all(workers.map((w) => w.stop()));
  };
});
afterAll(async () => {
  await stopWorkers?.();
  await relay?.stop();
  await bus?.close();
  await receivables?.close();
  await db?.destroy();
  await drop?.();
});

/** Requests a booklet of `size` installments (its build job goes out through the outbox): its id. */
async function queueBooklet(size: number): Promise<string> {
  const paymentSlipId = randomUUID();
  sizes.set(paymentSlipId, size);
  const accepted = await requestBooklet(
    db,
    new BusInstallmentSource(bus),
    randomUUID(),
    paymentSlipId,
    'https://erp.example.com/hook',
  );
  relay.wake();
  return accepted.bookletId;
}

/** Waits (at most 150 s) until the booklet is no longer queued: its row then. */
async function built(bookletId: string) {
  const started = performance.now();
  let row = await statusOf(bookletId);
  while (row.status === 'queued' && performance.now() - started < 150_000) {
    await new Promise((r) => setTimeout(r, 100));
    row = await statusOf(bookletId);
  }
  return row;
}

/**
 * Every build job was delivered once, and acked: the consumer's deliveries (its sequence counts
 * redeliveries too) are the stream's messages, and none is pending.
 */
async function expectDeliveredOnce(): Promise<void> {
  const jsm = await bus.connection.jetstreamManager();
  const consumer = await jsm.consumers.info(
    `${bus.prefix}_${Streams.bookletBuilds.name}`,
    Streams.bookletBuilds.consumer,
  );
  expect(consumer.delivered.consumer_seq).toBe(consumer.delivered.stream_seq);
  expect(consumer.num_ack_pending).toBe(0);
}

async function statusOf(bookletId: string) {
  return db
    .selectFrom('booklets')
    .select(['status', 'installment_count', 'page_count', 'error'])
    .where('id', '=', bookletId)
    .executeTakeFirstOrThrow();
}

it(`builds a ${MAX_BATCH_ITEMS}-installment booklet without stalling the event loop, its heartbeats keeping the job`, async () => {
  const stream = `${bus.prefix}_${Streams.bookletBuilds.name}`;
  // The in-progress acks ("+WPI") the worker sends for the job while it builds, as the server gets them.
  const beats: number[] = [];
  const acks = receivables.connection.subscribe(`$JS.ACK.${stream}.${Streams.bookletBuilds.consumer}.>`, {
    callback: (_err, m) => {
      if (m.string() === '+WPI') beats.push(performance.now());
    },
  });
  await receivables.connection.flush();

  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  const row = await built(await queueBooklet(MAX_BATCH_ITEMS));
  const buildMs = performance.now() - started;
  delay.disable();
  acks.unsubscribe();

  expect(row).toEqual({
    status: 'ready',
    installment_count: MAX_BATCH_ITEMS,
    page_count: bookletPageCount(MAX_BATCH_ITEMS),
    error: null,
  });
  const longestStallMs = delay.max / 1e6;
  console.info(
    `${bookletPageCount(MAX_BATCH_ITEMS)} pages in ${Math.round(buildMs)} ms; longest event-loop stall ${Math.round(longestStallMs)} ms (p99 ${Math.round(delay.percentile(99) / 1e6)} ms); ${beats.length} heartbeats`,
  );
  expect(longestStallMs).toBeLessThan(MAX_STALL_MS);
  // A build longer than an ack wait is only possible with heartbeats; at least one went out whatever its length.
  expect(buildMs).toBeGreaterThan(TEST_ACK_WAIT_MS / 3);
  expect(beats.length).toBeGreaterThanOrEqual(1);
  // The server never took the job back: no heartbeat came too late.
  await expectDeliveredOnce();
}, 180_000);

it('keeps the build jobs waiting for a free slot from redelivery too', async () => {
  // Two build at once; the other two wait longer than an ack wait for their turn, held by this instance.
  const ids = await Promise.all([500, 500, 500, 500].map(queueBooklet));
  const rows = await Promise.all(ids.map(built));
  expect(rows.map((r) => r.status)).toEqual(['ready', 'ready', 'ready', 'ready']);
  await expectDeliveredOnce();
}, 180_000);
