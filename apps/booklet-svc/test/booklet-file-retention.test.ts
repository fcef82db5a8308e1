import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { ServiceError, type Beneficiary, type InstallmentsReply, type InstallmentView } from '@payments/contracts';
import {
  createDatabase,
  createPartitionsAhead,
  createTestDatabase,
  maintainPartitions,
  migrateToLatest,
} from '@payments/db';
import { createLogger } from '@payments/logger';
import { readPdf } from '@payments/test-support/pdf-text';
import { bookletPdfPartitions, deleteExpiredLegacyFiles, PostgresPdfStore } from '../src/db/booklet-files';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { BookletsDatabase } from '../src/db/schema';
import { buildBooklet, type BuilderDeps } from '../src/domain/booklet-builder';
import { BookletDownloads } from '../src/domain/booklet-downloads';
import { requestBooklet } from '../src/domain/booklet-requests';
import type { InstallmentSource } from '../src/domain/ports';
import { barcodeFor, pixCode, typeableLineFor } from './slip-fixtures';

/**
 * Booklet files against a real Postgres: dropped with their day's partition past the retention, and
 * rebuilt by a later download; the previous release's statements on the migrated schema.
 */

const RETENTION_DAYS = 30;
const DAY_MS = 86_400_000;
const silent = createLogger('booklet-file-retention-test', 'silent');

const beneficiary: Beneficiary = {
  name: 'Colégio Vale Verde Ltda',
  tax_id: '45723174000110',
  city: 'Curitiba',
  pix_key: '+5541999990000',
  agency: null,
  account: null,
  address: 'Rua XV de Novembro, 700',
};

/** receivables-svc as booklet-svc sees it: the installments it holds now, and how often it was asked. */
class ChangingSource implements InstallmentSource {
  asked = 0;
  constructor(public reply: InstallmentsReply) {}
  installments(): Promise<InstallmentsReply> {
    this.asked += 1;
    return Promise.resolve(structuredClone(this.reply));
  }
  payeeName(): Promise<string> {
    return Promise.resolve('Tenant');
  }
}

let n = 0;
function installment(dueDate: string): InstallmentView {
  n += 1;
  const amountCents = 20_000 + n;
  const barcode = barcodeFor(amountCents, dueDate, `${String(n).padStart(10, '0')}123456789012345`);
  return {
    account_receivable_id: randomUUID(),
    due_date: dueDate,
    amount_cents: amountCents,
    instructions: ['Não receber após 30 dias do vencimento.'],
    state: 'pending',
    payment_date: null,
    registered: true,
    our_number: `5550${n}`,
    typeable_line: typeableLineFor(barcode),
    barcode,
    pix_copy_and_paste: pixCode(`retention${n}`, amountCents),
    payer: {
      name: 'Ana Pagadora',
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
  db = createDatabase<BookletsDatabase>({
    url: database.url,
    schema: SCHEMA,
    applicationName: 'booklet-retention-test',
  });
  await migrateToLatest(db, SCHEMA, migrations);
});
afterAll(async () => {
  await db?.destroy();
  await drop?.();
});

function deps(source: InstallmentSource) {
  const store = new PostgresPdfStore(db, RETENTION_DAYS);
  const builder: BuilderDeps = {
    db,
    source,
    store,
    links: (id) => `https://api.example.com/downloads/${id}`,
    logger: silent,
    maxWaitMs: 60_000,
  };
  return { builder, downloads: new BookletDownloads({ db, source, store, logger: silent }) };
}

/** A booklet requested and built as the worker does: its id and the text of the PDF first stored. */
async function builtBooklet(source: ChangingSource) {
  const { builder, downloads } = deps(source);
  const tenantId = randomUUID();
  const accepted = await requestBooklet(db, source, tenantId, randomUUID(), 'https://erp.example.com/hook', 'key-1');
  expect(await buildBooklet(builder, { tenant_id: tenantId, booklet_id: accepted.bookletId })).toBe('done');
  const first = await downloads.download(accepted.bookletId);
  return { bookletId: accepted.bookletId, downloads, text: (await readPdf(first.pdf)).pages };
}

/** The partitions of booklet_pdfs holding a booklet's file, from the catalog (not from libs/db). */
async function partitionsHolding(bookletId: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from booklet_pdfs f join pg_class c on c.oid = f.tableoid
    where f.booklet_id = ${bookletId}`.execute(db);
  return rows.map((r) => r.name);
}

async function exists(table: string): Promise<boolean> {
  const { rows } = await sql<{ found: string | null }>`select to_regclass(${table})::text as found`.execute(db);
  return rows[0]?.found !== null;
}

/** Moves a booklet's file back in time, into a partition made for that day (as if stored then). */
async function ageFile(bookletId: string, days: number): Promise<void> {
  const then = new Date(Date.now() - days * DAY_MS);
  await createPartitionsAhead(
    db as unknown as Kysely<unknown>,
    SCHEMA,
    { ...bookletPdfPartitions(RETENTION_DAYS), ahead: 0 },
    then,
  );
  await sql`update booklet_pdfs set created_at = ${then} where booklet_id = ${bookletId}`.execute(db);
}

it('drops a file past its retention with its partition, and a later download answers the same booklet', async () => {
  const source = new ChangingSource({
    installments: [installment('2027-04-10'), installment('2027-05-10'), installment('2027-06-10')],
    payee: beneficiary,
  });
  const { bookletId, downloads, text } = await builtBooklet(source);
  expect(text.join('\n')).toContain('Colégio Vale Verde Ltda');

  await ageFile(bookletId, RETENTION_DAYS + 2);
  const [partition] = await partitionsHolding(bookletId);
  expect(partition).toMatch(/^booklet_pdfs_p\d{8}$/);
  const { dropped } = await maintainPartitions(db as unknown as Kysely<unknown>, SCHEMA, [
    bookletPdfPartitions(RETENTION_DAYS),
  ]);
  expect(dropped).toContain(`${SCHEMA}.${partition}`);
  expect(await exists(`${SCHEMA}.${partition}`)).toBe(false);
  expect(await partitionsHolding(bookletId)).toEqual([]);

  const askedBefore = source.asked;
  const again = await downloads.download(bookletId);
  expect(source.asked).toBe(askedBefore + 1);
  expect((await readPdf(again.pdf)).pages).toEqual(text);
  // Stored again, in today's partition, for another retention: the next download reads it.
  expect(await partitionsHolding(bookletId)).toHaveLength(1);
  await downloads.download(bookletId);
  expect(source.asked).toBe(askedBefore + 1);
});

it('rebuilds once for downloads that come together, and keeps one file', async () => {
  const source = new ChangingSource({ installments: [installment('2027-04-10')], payee: beneficiary });
  const { bookletId, downloads, text } = await builtBooklet(source);
  await sql`delete from booklet_pdfs where booklet_id = ${bookletId}`.execute(db);
  const askedBefore = source.asked;
  const files = await Promise.all([1, 2, 3].map(() => downloads.download(bookletId)));
  expect(source.asked).toBe(askedBefore + 1);
  for (const file of files) expect((await readPdf(file.pdf)).pages).toEqual(text);
  // Two instances rebuilding at once still leave one file.
  const other = deps(source).downloads;
  await sql`delete from booklet_pdfs where booklet_id = ${bookletId}`.execute(db);
  await Promise.all([downloads.download(bookletId), other.download(bookletId)]);
  expect(await partitionsHolding(bookletId)).toHaveLength(1);
});

it('answers 410 when every installment was cancelled since the file was dropped', async () => {
  const source = new ChangingSource({ installments: [installment('2027-04-10')], payee: beneficiary });
  const { bookletId, downloads } = await builtBooklet(source);
  await sql`delete from booklet_pdfs where booklet_id = ${bookletId}`.execute(db);
  source.reply = {
    installments: source.reply.installments.map((i) => ({ ...i, state: 'cancelled' }) as unknown as InstallmentView),
    payee: beneficiary,
  };
  const refusal = await downloads.download(bookletId).catch((err: unknown) => err);
  expect(refusal).toBeInstanceOf(ServiceError);
  expect((refusal as ServiceError).status).toBe(410);
});

describe('the previous release on the migrated schema', () => {
  // Its statements, as apps/booklet-svc/src of v0.28.0 sends them (transport/bus-sources.ts, handlers.ts).
  async function previousPut(bookletId: string, pdf: Buffer): Promise<void> {
    await sql`insert into booklet_files (booklet_id, pdf) values (${bookletId}, ${pdf})
      on conflict (booklet_id) do update set pdf = ${pdf}`.execute(db);
  }
  async function previousGet(bookletId: string): Promise<Buffer | undefined> {
    const { rows } = await sql<{ pdf: Buffer }>`select pdf from booklet_files where booklet_id = ${bookletId}`.execute(
      db,
    );
    return rows[0]?.pdf;
  }
  async function previousRequest(): Promise<string> {
    const id = randomUUID();
    const slip = randomUUID();
    await sql`insert into booklets (id, tenant_id, payment_slip_id, payment_slip_id_as_sent, url_callback, status,
        installment_count, page_count, error, finished_at)
      values (${id}, ${randomUUID()}, ${slip}, ${slip}, 'https://erp.example.com/hook', 'queued', null, null, null, null)
      on conflict (id) do nothing`.execute(db);
    await sql`update booklets set status = 'ready', installment_count = 1, page_count = 2, error = null,
      finished_at = now() where id = ${id} and status = 'queued'`.execute(db);
    return id;
  }

  it('stores, replaces and reads its files, and this release serves them', async () => {
    const id = await previousRequest();
    await previousPut(id, Buffer.from('%PDF-first'));
    await previousPut(id, Buffer.from('%PDF-second'));
    expect((await previousGet(id))?.toString()).toBe('%PDF-second');
    const { downloads } = deps(new ChangingSource({ installments: [], payee: beneficiary }));
    expect((await downloads.download(id)).pdf.toString()).toBe('%PDF-second');
  });

  it('its files past the retention are not served and are swept in batches; newer ones stay', async () => {
    const old = [await previousRequest(), await previousRequest(), await previousRequest()];
    const recent = await previousRequest();
    for (const id of old) await previousPut(id, Buffer.from('%PDF-old'));
    await previousPut(recent, Buffer.from('%PDF-recent'));
    await sql`update booklet_files set created_at = now() - make_interval(days => ${RETENTION_DAYS + 1})
      where booklet_id in (${sql.join(old)})`.execute(db);
    const store = new PostgresPdfStore(db, RETENTION_DAYS);
    for (const id of old) expect(await store.get(id)).toBeUndefined();
    // One row a statement: one batch in the first run, the other two in the next.
    expect(await deleteExpiredLegacyFiles(db, RETENTION_DAYS, 1, 1)).toBe(1);
    expect(await deleteExpiredLegacyFiles(db, RETENTION_DAYS, 1)).toBe(2);
    for (const id of old) expect(await previousGet(id)).toBeUndefined();
    expect((await previousGet(recent))?.toString()).toBe('%PDF-recent');
  });
});

it('a file lands in a partition made ahead, whatever the day', async () => {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'booklets.booklet_pdfs'::regclass order by 1`.execute(db);
  const today = new Date().toISOString().slice(0, 10).replaceAll('-', '');
  expect(rows.map((r) => r.name)).toContain(`booklet_pdfs_p${today}`);
  expect(rows.length).toBeGreaterThanOrEqual(4);
});
