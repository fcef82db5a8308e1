import { randomUUID } from 'node:crypto';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { ReceivablesSearchQuery } from '@payments/contracts';
import { ensureOnlineIndexesOnce } from '@payments/db';
import { SCHEMA } from '../src/db/migrations';
import type { ReceivablesDatabase } from '../src/db/schema';
import { searchFilterIndexes } from '../src/db/migrations';
import { acceptReceivables } from '../src/domain/intake';
import type { ClientDirectory, Payer } from '../src/domain/ports';
import { registerReceivables } from '../src/domain/registration';
import { searchReceivables, searchStatement } from '../src/domain/search';
import { chargeItem, row, TestProvider, TZ, useStateFixture, workerDeps, type StateFixture } from './state-fixture';

// docs/api.md, "Search": the optional payer name, payer tax id, our_number and value filters.

let f: StateFixture;
useStateFixture((fixture) => {
  f = fixture;
});

/** Payers with the names and tax ids a test gives them (the fixture's directory gives every payer one CPF). */
class NamedPayers implements ClientDirectory {
  private readonly payers = new Map<string, Payer>();

  add(name: string, taxId: string): string {
    const clientId = randomUUID();
    this.payers.set(clientId, {
      clientId,
      name,
      taxId,
      address: null,
      number: null,
      neighborhood: null,
      city: null,
      state: null,
      zipCode: null,
      email: null,
    });
    return clientId;
  }

  async find(_tenantId: string, clientIds: string[]): Promise<Map<string, Payer>> {
    const found = new Map<string, Payer>();
    for (const id of clientIds) {
      const payer = this.payers.get(id.toLowerCase());
      if (payer) found.set(id.toLowerCase(), payer);
    }
    return found;
  }
}

const CPF = '529.982.247-25';
const CNPJ = '11.222.333/0001-81';

interface Seeded {
  tenantId: string;
  ids: Record<'joao' | 'joana' | 'maria' | 'percent' | 'company', string>;
  ourNumbers: Map<string, string>;
}

let seeded: Seeded;

/** One tenant's charges, registered (so each has an our_number), and one other tenant's look-alike. */
async function seed(): Promise<Seeded> {
  const tenantId = randomUUID();
  const payers = new NamedPayers();
  const at = (client: string, emission: string, value: number) =>
    chargeItem(client, { emission_date: emission, due_date: '2026-12-20', value, items: undefined });
  const items = {
    joao: at(payers.add('João Conceição', CPF), '2026-03-01', 100),
    joana: at(payers.add('JOANA CONCEICAO', '52998224725'), '2026-03-02', 250.5),
    // Decomposed accents (NFD), as some systems store them.
    maria: at(payers.add('Maria Conceic\u0327a\u0303o Lima', CPF), '2026-03-03', 250.5),
    percent: at(payers.add('Loja 100% Conceição_Ltda', CNPJ), '2026-03-04', 99.99),
    company: at(payers.add('Escola Aurora', '11222333000181'), '2026-03-05', 1234.56),
  };
  await acceptReceivables(f.db, payers, tenantId, f.accountFor(tenantId), Object.values(items));
  // Another tenant with the same payer and amount: never in this tenant's answers.
  const other = randomUUID();
  await acceptReceivables(f.db, payers, other, f.accountFor(other), [
    at(payers.add('João Conceição', CPF), '2026-03-01', 100),
  ]);
  const rows = await Promise.all(Object.values(items).map((i) => row(f, tenantId, i.account_receivable_id)));
  const provider = new TestProvider();
  await registerReceivables(workerDeps(f, provider), { tenant_id: tenantId, receivable_ids: rows.map((r) => r.id) }, 1);
  const ourNumbers = new Map<string, string>();
  for (const r of rows) {
    const ourNumber = (await row(f, tenantId, r.account_receivable_id)).our_number;
    if (ourNumber) ourNumbers.set(r.account_receivable_id, ourNumber);
  }
  const ids = Object.fromEntries(Object.entries(items).map(([k, v]) => [k, v.account_receivable_id])) as Seeded['ids'];
  return { tenantId, ids, ourNumbers };
}

beforeAll(async () => {
  seeded = await seed();
});

/** Thrown to end a transaction whose changes must not stay. */
class RolledBack extends Error {}

const MARCH = { state: 'all', start_date: '2026-03-01', end_date: '2026-03-31' } as const;

async function ids(filters: Partial<ReceivablesSearchQuery>, limit = 50): Promise<string[]> {
  const page = await searchReceivables(f.db, seeded.tenantId, { ...MARCH, ...filters }, limit, undefined, TZ);
  return page.items.map((i) => i.accounts_receivable_id);
}

describe('payer_name', () => {
  it('matches a substring whatever its letter case and accents, on either side', async () => {
    const { joao, joana, maria, percent } = seeded.ids;
    expect(await ids({ payer_name: 'conceicao' })).toEqual([joao, joana, maria, percent]);
    expect(await ids({ payer_name: 'CONCEIÇÃO' })).toEqual([joao, joana, maria, percent]);
    expect(await ids({ payer_name: 'joão c' })).toEqual([joao]);
    expect(await ids({ payer_name: 'joã' })).toEqual([joao, joana]);
    expect(await ids({ payer_name: 'jOaNa c' })).toEqual([joana]);
    expect(await ids({ payer_name: 'ção li' })).toEqual([maria]);
    expect(await ids({ payer_name: 'Ernesto' })).toEqual([]);
  });

  it('takes % and _ as the characters themselves, not as wildcards', async () => {
    expect(await ids({ payer_name: '100%' })).toEqual([seeded.ids.percent]);
    expect(await ids({ payer_name: 'o_L' })).toEqual([seeded.ids.percent]);
    expect(await ids({ payer_name: 'a%o' })).toEqual([]);
    expect(await ids({ payer_name: 'jo_o' })).toEqual([]);
  });

  it('narrows the state and date selection, and pages through the matches', async () => {
    const { joao, joana, maria, percent } = seeded.ids;
    expect(await ids({ payer_name: 'conceicao', end_date: '2026-03-02' })).toEqual([joao, joana]);
    expect(await ids({ payer_name: 'conceicao', state: 'cancelled' })).toEqual([]);
    const first = await searchReceivables(
      f.db,
      seeded.tenantId,
      { ...MARCH, payer_name: 'conceicao' },
      3,
      undefined,
      TZ,
    );
    expect(first.nextCursor).not.toBeNull();
    const second = await searchReceivables(
      f.db,
      seeded.tenantId,
      { ...MARCH, payer_name: 'conceicao' },
      3,
      first.nextCursor ?? undefined,
      TZ,
    );
    expect([...first.items, ...second.items].map((i) => i.accounts_receivable_id)).toEqual([
      joao,
      joana,
      maria,
      percent,
    ]);
    expect(second.nextCursor).toBeNull();
  });
});

describe('payer_tax_id', () => {
  it('finds a CPF or a CNPJ however either side is punctuated', async () => {
    const { joao, joana, maria, percent, company } = seeded.ids;
    expect(await ids({ payer_tax_id: '52998224725' })).toEqual([joao, joana, maria]);
    expect(await ids({ payer_tax_id: CPF })).toEqual([joao, joana, maria]);
    expect(await ids({ payer_tax_id: CNPJ })).toEqual([percent, company]);
    expect(await ids({ payer_tax_id: '11222333000181' })).toEqual([percent, company]);
    expect(await ids({ payer_tax_id: '111.444.777-35' })).toEqual([]);
  });
});

describe('our_number', () => {
  it('finds the one charge the bank numbered so', async () => {
    const { joana } = seeded.ids;
    const ourNumber = seeded.ourNumbers.get(joana);
    expect(ourNumber).toBeDefined();
    expect(await ids({ our_number: ourNumber })).toEqual([joana]);
    expect(await ids({ our_number: '99999999999' })).toEqual([]);
  });
});

describe('value', () => {
  it('matches the amount exactly, in reais with cents', async () => {
    const { joao, joana, maria, company } = seeded.ids;
    expect(await ids({ value: 250.5 })).toEqual([joana, maria]);
    expect(await ids({ value: 1234.56 })).toEqual([company]);
    expect(await ids({ value: 100 })).toEqual([joao]);
    expect(await ids({ value: 250.51 })).toEqual([]);
  });

  it('combines with the other filters (all must hold)', async () => {
    const { maria } = seeded.ids;
    expect(await ids({ value: 250.5, payer_name: 'maria', payer_tax_id: CPF })).toEqual([maria]);
    expect(await ids({ value: 250.5, payer_tax_id: CNPJ })).toEqual([]);
  });
});

describe('the indexes', () => {
  beforeAll(async () => {
    const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
    expect((await ensureOnlineIndexesOnce(f.db, SCHEMA, searchFilterIndexes, quiet)).status).toBe('done');
  });

  /**
   * The plan of the very statement a search sends, with every other index of the table dropped for the
   * moment (rolled back) and sequential scans off: on a table this small Postgres would rather scan, or
   * take any index that leads with the tenant.
   */
  async function plan(filters: Partial<ReceivablesSearchQuery>, keep: string): Promise<string> {
    const statement = searchStatement(f.db, seeded.tenantId, { ...MARCH, ...filters }, 500, undefined).compile();
    let lines = '';
    await f.db
      .transaction()
      .execute(async (trx) => {
        await dropIndexesBut(trx, keep);
        await sql`set local enable_seqscan = off`.execute(trx);
        const result = await trx.executeQuery<Record<string, string>>(
          CompiledQuery.raw(`explain ${statement.sql}`, [...statement.parameters]),
        );
        lines = result.rows.map((r) => Object.values(r).join(' ')).join('\n');
        throw new RolledBack();
      })
      .catch((err: unknown) => {
        if (!(err instanceof RolledBack)) throw err;
      });
    return lines;
  }

  async function dropIndexesBut(trx: Kysely<ReceivablesDatabase>, keep: string): Promise<void> {
    const others = await sql<{ name: string; constraint: string | null }>`
      select i.relname as name, c.conname as constraint
      from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
      join pg_namespace n on n.oid = t.relnamespace left join pg_constraint c on c.conindid = x.indexrelid and c.conrelid = t.oid
      where n.nspname = ${SCHEMA} and t.relname = 'receivables' and i.relname <> ${keep}`.execute(trx);
    for (const o of others.rows) {
      if (o.constraint) await sql`alter table receivables drop constraint ${sql.id(o.constraint)} cascade`.execute(trx);
      else await sql`drop index ${sql.id(o.name)}`.execute(trx);
    }
  }

  it.each([
    ['payer_name', { payer_name: 'conceicao' }, 'receivables_payer_name_trgm_idx'],
    ['payer_tax_id', { payer_tax_id: CPF }, 'receivables_payer_tax_id_idx'],
    ['our_number', { our_number: '00000000001' }, 'receivables_tenant_our_number_idx'],
    ['value', { value: 250.5 }, 'receivables_amount_idx'],
  ])('a search by %s can use its index', async (_name, filters, index) => {
    expect(await plan(filters, index)).toMatch(new RegExp(`(using|on) ${index}\\b`));
  });
});
