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
import { bookletPdfPartitions, PostgresPdfStore } from '../src/db/booklet-files';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { BookletsDatabase } from '../src/db/schema';
import { buildBooklet, type BuilderDeps } from '../src/domain/booklet-builder';
import { BookletDownloads } from '../src/domain/booklet-downloads';
import { requestBooklet } from '../src/domain/booklet-requests';
import type { InstallmentSource } from '../src/domain/ports';
import { barcodeFor, pixCode, typeableLineFor } from './slip-fixtures';

/**
 * Booklet files against a real Postgres: dropped with their day's partition past the retention, and
 * rebuilt by a later download; the previous release's table emptied by the migration and not read.
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
  const store = new PostgresPdfStore(db);
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

describe('booklet_files: emptied by 0008, dropped a release later by 0009', () => {
  // v0.30.0's read of a booklet's file (apps/booklet-svc/src/db/booklet-files.ts there), fallback included.
  async function v030Get(on: Kysely<BookletsDatabase>, bookletId: string): Promise<Buffer | undefined> {
    const { rows } = await sql<{ pdf: Buffer }>`
      select pdf from (
        select pdf, created_at from booklet_pdfs where booklet_id = ${bookletId}
        union all
        select pdf, created_at from booklet_files where booklet_id = ${bookletId}
          and created_at >= now() - make_interval(days => ${RETENTION_DAYS})
      ) f order by created_at desc limit 1`.execute(on);
    return rows[0]?.pdf;
  }
  async function legacyFiles(on: Kysely<BookletsDatabase>): Promise<number> {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from booklet_files`.execute(on);
    return rows[0]?.n ?? -1;
  }
  async function legacyTableExists(on: Kysely<BookletsDatabase>): Promise<boolean> {
    const { rows } = await sql<{ found: boolean }>`
      select to_regclass(${`${SCHEMA}.booklet_files`}) is not null as found`.execute(on);
    return rows[0]?.found ?? false;
  }

  it('0008 empties it, so v0.30.0 reads nothing there; 0009 drops it, and files are stored and read as before', async () => {
    const database = await createTestDatabase();
    const older = createDatabase<BookletsDatabase>({
      url: database.url,
      schema: SCHEMA,
      applicationName: 'booklet-0009-test',
    });
    const upTo = (last: string) => Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= last));
    try {
      await migrateToLatest(older, SCHEMA, upTo('0007_booklets_autovacuum'));
      const ids = [randomUUID(), randomUUID()] as const;
      for (const id of ids) {
        // As the release before v0.30.0 stored them: the booklet, then its file.
        const slip = randomUUID();
        await sql`insert into booklets (id, tenant_id, payment_slip_id, payment_slip_id_as_sent, url_callback, status)
          values (${id}, ${randomUUID()}, ${slip}, ${slip}, 'https://erp.example.com/hook', 'ready')`.execute(older);
        await sql`insert into booklet_files (booklet_id, pdf) values (${id}, ${Buffer.from('%PDF-legacy')})
          on conflict (booklet_id) do update set pdf = excluded.pdf`.execute(older);
      }
      expect(await legacyFiles(older)).toBe(2);
      expect((await v030Get(older, ids[0]))?.toString()).toBe('%PDF-legacy');

      await migrateToLatest(older, SCHEMA, upTo('0008_empty_booklet_files'));
      expect(await legacyFiles(older)).toBe(0);
      for (const id of ids) expect(await v030Get(older, id)).toBeUndefined();

      await migrateToLatest(older, SCHEMA, migrations);
      expect(await legacyTableExists(older)).toBe(false);
      const store = new PostgresPdfStore(older);
      await store.put(ids[0], Buffer.from('%PDF-rebuilt'));
      expect((await store.get(ids[0]))?.toString()).toBe('%PDF-rebuilt');
      expect(await store.get(ids[1])).toBeUndefined();
    } finally {
      await older.destroy();
      await database.drop();
    }
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
