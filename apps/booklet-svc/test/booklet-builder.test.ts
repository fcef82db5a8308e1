import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import {
  Streams,
  type Beneficiary,
  type BookletSentCallback,
  type CallbackRequestBatch,
  type InstallmentsReply,
  type InstallmentView,
} from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import { readPdf } from '@payments/test-support/pdf-text';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { BookletsDatabase } from '../src/db/schema';
import { buildBooklet, type BuilderDeps } from '../src/domain/booklet-builder';
import { requestBooklet } from '../src/domain/booklet-requests';
import type { InstallmentSource } from '../src/domain/ports';
import { PostgresPdfStore } from '../src/db/booklet-files';
import { barcodeFor, pixCode, squeeze, typeableLineFor } from './slip-fixtures';

/**
 * The builder against a real Postgres: what it reads from receivables-svc (a fixed reply here) and
 * what it stores and queues (the PDF, the sent callback in the outbox).
 */

const TENANT_NAME = 'Nome Do Tenant Que Não É O Beneficiário';
const beneficiary: Beneficiary = {
  name: 'Escola Pequeno Príncipe',
  tax_id: '45723174000110',
  city: 'Florianópolis',
  pix_key: '+5548999990000',
  agency: null,
  account: null,
  address: 'Rua das Rendeiras, 42',
};

/** receivables-svc and the gateway as booklet-svc sees them: one fixed answer each. */
class FixedSource implements InstallmentSource {
  constructor(private readonly reply: InstallmentsReply) {}
  installments(): Promise<InstallmentsReply> {
    return Promise.resolve(structuredClone(this.reply));
  }
  payeeName(): Promise<string> {
    return Promise.resolve(TENANT_NAME);
  }
}

let n = 0;
function installment(
  dueDate: string,
  state: InstallmentView['state'] = 'pending',
  paymentDate: string | null = null,
): InstallmentView {
  n += 1;
  const amountCents = 10_000 + n;
  const barcode = barcodeFor(amountCents, dueDate, `${String(n).padStart(10, '0')}987654321098765`);
  return {
    account_receivable_id: randomUUID(),
    due_date: dueDate,
    amount_cents: amountCents,
    instructions: [],
    state,
    payment_date: paymentDate,
    registered: true,
    our_number: `7770${n}`,
    typeable_line: typeableLineFor(barcode),
    barcode,
    pix_copy_and_paste: pixCode(`builder${n}`, amountCents),
    payer: {
      name: 'Pedro Pagador',
      cnpj_cpf: '12345678909',
      address: null,
      number: null,
      neighborhood: null,
      city: null,
      state: null,
      zip_code: null,
    },
  };
}

let drop: () => Promise<void>;
let db: Kysely<BookletsDatabase>;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  db = createDatabase<BookletsDatabase>({ url: database.url, schema: SCHEMA, applicationName: 'booklet-builder-test' });
  await migrateToLatest(db, SCHEMA, migrations);
});
afterAll(async () => {
  await db?.destroy();
  await drop?.();
});

/** Requests and builds a booklet from `reply`: what the ERP is called back with, and the PDF's text. */
async function build(reply: InstallmentsReply) {
  const source = new FixedSource(reply);
  const tenantId = randomUUID();
  const paymentSlipId = randomUUID();
  const accepted = await requestBooklet(db, source, tenantId, paymentSlipId, 'https://erp.example.com/hook');
  const deps: BuilderDeps = {
    db,
    source,
    store: new PostgresPdfStore(db),
    links: (id) => `https://api.example.com/downloads/${id}`,
    logger: createLogger('booklet-builder-test', 'silent'),
    maxWaitMs: 60_000,
  };
  expect(await buildBooklet(deps, { tenant_id: tenantId, booklet_id: accepted.bookletId })).toBe('done');
  const queued = await db
    .selectFrom('outbox')
    .select('payload')
    .where('stream', '=', Streams.callbackRequests.name)
    .execute();
  const callback = queued
    .flatMap((row) => (row.payload as CallbackRequestBatch).requests)
    .find((r) => (r.payload as { payment_slip_id: string }).payment_slip_id === paymentSlipId);
  const pdf = await deps.store.get(accepted.bookletId);
  const row = await db
    .selectFrom('booklets')
    .selectAll()
    .where('id', '=', accepted.bookletId)
    .executeTakeFirstOrThrow();
  return { accepted, callback, row, pages: pdf ? (await readPdf(pdf)).pages : [] };
}

it('prints pending and paid installments by due date, paid to the beneficiary, and counts them in the callback', async () => {
  const march = installment('2027-03-10');
  const january = installment('2027-01-10', 'approved', '2027-01-08T16:45:12.345');
  const february = installment('2027-02-10');
  const cancelled = { ...installment('2027-01-20'), state: 'cancelled' } as unknown as InstallmentView;
  // Unsorted, and with a cancelled one that receivables-svc should not have sent.
  const { accepted, callback, row, pages } = await build({
    installments: [march, cancelled, january, february],
    payee: beneficiary,
  });

  expect(accepted.installmentCount).toBe(3);
  expect(callback?.event_type).toBe('booklet.sent');
  const sent = callback?.payload as BookletSentCallback;
  expect(sent).toMatchObject({ success: true, type: 'sent', installments: 3 });
  expect(row).toMatchObject({ status: 'ready', installment_count: 3, page_count: 2 });

  const text = pages.join('\n');
  // The payee is the account's beneficiary, on the cover, every slip and stub; never the tenant's name.
  expect(text).toContain('Escola Pequeno Príncipe');
  expect(text).toContain('45.723.174/0001-10');
  expect(text).toContain('Rua das Rendeiras, 42');
  expect(text.match(/Escola Pequeno Príncipe - CPF\/CNPJ 45\.723\.174\/0001-10/g)).toHaveLength(3);
  expect(text).not.toContain(TENANT_NAME);

  // By due date: January (paid) is 1/3, then February, then March.
  const parts = pages[1];
  const at = (needle: string) => parts.indexOf(needle);
  expect(at('Parcela 1/3')).toBeLessThan(at('10/01/2027'));
  expect(at('10/01/2027')).toBeLessThan(at('Parcela 2/3'));
  expect(at('Parcela 2/3')).toBeLessThan(at('10/02/2027'));
  expect(at('10/02/2027')).toBeLessThan(at('Parcela 3/3'));
  expect(at('Parcela 3/3')).toBeLessThan(at('10/03/2027'));
  const squeezed = squeeze(parts);
  expect(squeezed.indexOf(february.typeable_line!)).toBeGreaterThan(at('Parcela 2/3'));
  expect(squeezed.indexOf(march.typeable_line!)).toBeGreaterThan(squeezed.indexOf(february.typeable_line!));

  // January is paid: marked with its payment day, none of its payment data printed.
  expect(parts).toContain('PAGO em 08/01/2027');
  expect(at('PAGO em 08/01/2027')).toBeLessThan(at('Parcela 2/3'));
  expect(squeezed).not.toContain(january.typeable_line);
  expect(parts.replace(/\n/g, '')).not.toContain(january.pix_copy_and_paste);
  // The cancelled one is left out altogether.
  expect(text).not.toContain('20/01/2027');
  expect(squeezed).not.toContain(cancelled.typeable_line);
});

it('names the tenant as payee for installments accepted before provider accounts (no beneficiary)', async () => {
  const { callback, pages } = await build({ installments: [installment('2027-05-10')], payee: null });
  expect((callback?.payload as BookletSentCallback).installments).toBe(1);
  expect(pages.join('\n')).toContain(TENANT_NAME);
});

it('does not wait on a paid installment, and builds a booklet whose installments are all paid', async () => {
  const paid = { ...installment('2027-06-10', 'approved', '2027-06-01T09:00:00.000'), registered: false };
  const { accepted, callback, pages } = await build({ installments: [paid], payee: beneficiary });
  expect(accepted.waitingForRegistration).toBe(0);
  expect((callback?.payload as BookletSentCallback).installments).toBe(1);
  expect(pages[0]).toContain('Valor em aberto');
  expect(pages[1]).toContain('PAGO em 01/06/2027');
});

it('refuses (404) a payment_slip_id whose installments are all cancelled or rejected', async () => {
  const cancelled = { ...installment('2027-07-10'), state: 'rejected' } as unknown as InstallmentView;
  await expect(
    requestBooklet(
      db,
      new FixedSource({ installments: [cancelled], payee: beneficiary }),
      randomUUID(),
      randomUUID(),
      'https://erp.example.com/hook',
    ),
  ).rejects.toMatchObject({ name: 'ServiceError', code: 'not_found' });
});

describe('a retried booklet request (same Idempotency-Key)', () => {
  const source = () => new FixedSource({ installments: [installment('2027-08-10')], payee: beneficiary });
  const buildJobs = async (bookletId: string) =>
    db.selectFrom('outbox').select('msg_id').where('msg_id', '=', `booklet_${bookletId}`).execute();

  it('names the booklet the first attempt stored, and queues no second build', async () => {
    const tenantId = randomUUID();
    const paymentSlipId = randomUUID();
    const first = await requestBooklet(db, source(), tenantId, paymentSlipId, 'https://erp.example.com/hook', 'key-1');
    // The retry spells the slip id in upper case: ERP ids match whatever their case.
    const retry = await requestBooklet(
      db,
      source(),
      tenantId,
      paymentSlipId.toUpperCase(),
      'https://erp.example.com/hook',
      'key-1',
    );
    expect(retry.bookletId).toBe(first.bookletId);
    const rows = await db.selectFrom('booklets').select('id').where('payment_slip_id', '=', paymentSlipId).execute();
    expect(rows).toHaveLength(1);
    expect(await buildJobs(first.bookletId)).toHaveLength(1);
  });

  it('gives another key, tenant or slip another booklet', async () => {
    const tenantId = randomUUID();
    const paymentSlipId = randomUUID();
    const hook = 'https://erp.example.com/hook';
    const ids = new Set([
      (await requestBooklet(db, source(), tenantId, paymentSlipId, hook, 'key-1')).bookletId,
      (await requestBooklet(db, source(), tenantId, paymentSlipId, hook, 'key-2')).bookletId,
      (await requestBooklet(db, source(), randomUUID(), paymentSlipId, hook, 'key-1')).bookletId,
      (await requestBooklet(db, source(), tenantId, randomUUID(), hook, 'key-1')).bookletId,
    ]);
    expect(ids.size).toBe(4);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('the payment slip id as the ERP spelled it', () => {
  it('answers, calls back and prints the spelling of the charges, whatever spelling was asked', async () => {
    const asSent = `aBcD${randomUUID().slice(4).toUpperCase()}`;
    const source = new FixedSource({
      installments: [installment('2027-09-10')],
      payee: beneficiary,
      payment_slip_id: asSent,
    });
    const tenantId = randomUUID();
    const accepted = await requestBooklet(db, source, tenantId, asSent.toLowerCase(), 'https://erp.example.com/hook');
    expect(accepted.paymentSlipId).toBe(asSent);
    const deps: BuilderDeps = {
      db,
      source,
      store: new PostgresPdfStore(db),
      links: (id) => `https://api.example.com/downloads/${id}`,
      logger: createLogger('booklet-builder-test', 'silent'),
      maxWaitMs: 60_000,
    };
    expect(await buildBooklet(deps, { tenant_id: tenantId, booklet_id: accepted.bookletId })).toBe('done');
    const callbacks = (
      await db.selectFrom('outbox').select('payload').where('stream', '=', Streams.callbackRequests.name).execute()
    )
      .flatMap((row) => (row.payload as CallbackRequestBatch).requests)
      .filter((r) => r.tenant_id === tenantId);
    expect(callbacks.map((r) => (r.payload as BookletSentCallback).payment_slip_id)).toEqual([asSent]);
    const pdf = await deps.store.get(accepted.bookletId);
    expect((await readPdf(pdf!)).pages.join('\n')).toContain(asSent);
  });

  it('the upgrade gives booklets stored before it their stored spelling', async () => {
    const database = await createTestDatabase();
    const old = createDatabase<BookletsDatabase>({ url: database.url, schema: SCHEMA });
    try {
      const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0005'));
      await migrateToLatest(old, SCHEMA, before);
      const slip = randomUUID();
      await sql`insert into booklets (id, tenant_id, payment_slip_id, url_callback, status)
        values (${randomUUID()}, ${randomUUID()}, ${slip.toUpperCase()}, 'https://erp.example.com/hook', 'queued')`.execute(
        old,
      );
      await migrateToLatest(old, SCHEMA, migrations);
      const row = await old.selectFrom('booklets').select('payment_slip_id_as_sent').executeTakeFirstOrThrow();
      expect(row.payment_slip_id_as_sent).toBe(slip);
    } finally {
      await old.destroy();
      await database.drop();
    }
  });
});
