import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql, type Kysely } from 'kysely';
import { connectBus, type Bus, type Consumption } from '@payments/bus';
import { MAX_CALLBACK_BATCH, Streams, type CallbackRequest } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { CallbacksDatabase } from '../src/db/schema';
import { DeliveryEngine, type SigningSecrets } from '../src/domain/delivery-engine';
import { EventStore } from '../src/domain/event-store';
import { WorkerRegistry } from '../src/domain/worker-registry';
import { startWorkers, tenantOf } from '../src/transport/ingest';
import { createHttpDelivery } from '../src/transport/undici-http-delivery';

// One tenant's backlog of callback request messages lies on the stream ahead of another tenant's one
// message. Taken in stream order, the other tenant's callbacks were stored, and so delivered, only
// after the whole backlog. Tenants take turns at ingest: the other tenant's callbacks are stored and
// delivered while most of the backlog still waits. Real NATS, Postgres and HTTP receivers; the
// oracle is the events table and what each receiver got, not the consumer's own state.

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const silent = createLogger('fair-ingest-test', (process.env.TEST_LOG_LEVEL ?? 'silent') as 'silent');

/** Tenant A's backlog: this many messages of MAX_CALLBACK_BATCH callbacks each. */
const A_MESSAGES = 150;
const A_TOTAL = A_MESSAGES * MAX_CALLBACK_BATCH;
const B_TOTAL = 10;

const tenantA = randomUUID();
const tenantB = randomUUID();
let test: { url: string; drop: () => Promise<void> };
let db: Kysely<CallbacksDatabase>;
let bus: Bus;
let prefix: string;
const receivers: Array<Server & { received: () => number }> = [];
const delivery = createHttpDelivery({ timeoutMs: 5_000, policy: 'allow-private' });
let engine: DeliveryEngine | undefined;
let workers: Consumption[] = [];

/** An ERP's receiver answering 204 at once; counts the callbacks it got. */
async function receiver(): Promise<{ url: string; received: () => number }> {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count += 1;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receivers.push(Object.assign(server, { received: () => count }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`, received: () => count };
}

const secrets: SigningSecrets = {
  secretsFor: async () => ['whsec_' + Buffer.from('fair-ingest-test-secret-0123456789').toString('base64')],
};

beforeAll(async () => {
  test = await createTestDatabase();
  db = createDatabase<CallbacksDatabase>({ url: test.url, schema: SCHEMA, poolSize: 6 });
  await migrateToLatest(db, SCHEMA, migrations);
  prefix = `t${randomBytes(5).toString('hex')}`;
  bus = await connectBus({ url: NATS_URL, prefix, name: 'fair-ingest-test', logger: silent, timeoutMs: 5_000 });
  await bus.streams.provision(Streams.callbackRequests);
}, 60_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await engine?.stop();
  await delivery.close();
  for (const server of receivers) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  const jsm = await bus.connection.jetstreamManager();
  for (const name of [bus.streams.streamName(Streams.callbackRequests), `${prefix}_dead_letters`])
    await jsm.streams.delete(name).catch(() => undefined);
  await bus.close();
  await db.destroy();
  await test.drop();
}, 60_000);

function requests(tenantId: string, url: string, count: number): CallbackRequest[] {
  return Array.from({ length: count }, () => ({
    event_id: `evt_${randomUUID().replace(/-/g, '')}`,
    tenant_id: tenantId,
    event_type: 'receivable.registered' as const,
    url,
    payload: { success: true, type: 'registered', accounts_receivable_id: randomUUID() },
  }));
}

async function storedCounts(): Promise<{ a: number; b: number }> {
  const { rows } = await sql<{ tenant_id: string; n: string }>`
    select tenant_id, count(*) as n from event_log group by tenant_id`.execute(db);
  const of = (tenant: string) => Number(rows.find((r) => r.tenant_id === tenant)?.n ?? 0);
  return { a: of(tenantA), b: of(tenantB) };
}

/** Polls `probe` every 50 ms until `done` says so; answers the last probe. */
async function until<T>(what: string, probe: () => Promise<T> | T, done: (v: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it("stores and delivers a tenant's callbacks before most of another tenant's backlog ahead of them on the stream", async () => {
  const a = await receiver();
  const b = await receiver();
  // The backlog first, then B's one message: every one of A's messages is ahead of B's in the stream.
  for (let i = 0; i < A_MESSAGES; i++)
    await bus.streams.publish(
      Streams.callbackRequests,
      { requests: requests(tenantA, a.url, MAX_CALLBACK_BATCH) },
      `a-${i}-${randomUUID()}`,
    );
  await bus.streams.publish(Streams.callbackRequests, { requests: requests(tenantB, b.url, B_TOTAL) }, randomUUID());

  engine = new DeliveryEngine({
    store: new EventStore(db),
    workers: new WorkerRegistry(db),
    http: delivery,
    secrets,
    retry: { scheduleMs: [500, 500, 500], jitterPercent: 0 },
    limits: {
      concurrency: 32,
      hostConcurrency: 32,
      maxHeld: 20_000,
      maxHeldPerHost: 10_000,
      leaseMs: 10_000,
      timeoutMs: 5_000,
      pollIntervalMs: 500,
    },
    logger: silent,
  });
  await engine.start();
  workers = await startWorkers(bus, { engine, logger: silent });

  const whenBStored = await until('B stored', storedCounts, (n) => n.b === B_TOTAL, 60_000);
  const aDeliveredWhenB = await until(
    'B delivered',
    () => ({ a: a.received(), b: b.received() }),
    (n) => n.b >= B_TOTAL,
    30_000,
  );
  console.log(
    `fair-ingest: B's ${B_TOTAL} stored with ${whenBStored.a} of A's ${A_TOTAL} stored, ` +
      `delivered with ${aDeliveredWhenB.a} of A's delivered`,
  );
  expect(whenBStored.a).toBeLessThan(A_TOTAL / 2);
  expect(aDeliveredWhenB.a).toBeLessThan(A_TOTAL / 2);
  // A's backlog is not starved either: it is all stored in the end, each event once.
  await until('A stored', storedCounts, (n) => n.a === A_TOTAL, 120_000);
}, 240_000);

it("queues a message by its first request's tenant, a lone request by its own, anything else together", () => {
  const [first, second] = [randomUUID(), randomUUID()];
  const request = (tenant_id: string) => ({
    event_id: 'evt_1',
    tenant_id,
    event_type: 'receivable.paid',
    url: 'http://erp.test',
    payload: {},
  });
  expect(tenantOf({ requests: [request(first), request(second)] })).toBe(first);
  expect(tenantOf(request(second))).toBe(second);
  expect(tenantOf({ requests: [] })).toBe('');
  expect(tenantOf({ requests: [{ tenant_id: 7 }] })).toBe('');
  expect(tenantOf(null)).toBe('');
});
