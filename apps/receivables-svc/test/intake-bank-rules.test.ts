import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  ServiceError,
  type FieldError,
  type ProviderAccountVersion,
  type ProviderKind,
  type ReceivableCreateItem,
} from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { ReceivablesDatabase } from '../src/db/schema';
import { acceptReceivables } from '../src/domain/intake';
import type { ClientDirectory, Payer } from '../src/domain/ports';

/*
 * docs/architecture.md, "What an ERP is told": for an `inter` account, what Inter will refuse is refused at intake
 * with 422 in our field names, and nothing is stored. The expectations are Inter's own limits, as its
 * API reference states them (POST /cobrancas: valorNominal 2.5..99999999.99; Pagador: nome <= 100,
 * endereco <= 100, cidade <= 60, bairro <= 60, numero <= 10, email <= 50, cep of 8 digits, uf required;
 * a charge due today only until 19:59 Brasília time), written here by hand, not read from the code.
 */

/** Intake alone over its real schema (the state fixture would bring every handler along). */
const f = {} as { db: Kysely<ReceivablesDatabase> };
let drop: () => Promise<void>;

beforeAll(async () => {
  const test = await createTestDatabase();
  drop = test.drop;
  f.db = createDatabase<ReceivablesDatabase>({ url: test.url, schema: SCHEMA, poolSize: 2 });
  await migrateToLatest(f.db, SCHEMA, migrations);
});

afterAll(async () => {
  await f.db?.destroy();
  await drop?.();
});

function accountVersion(tenantId: string, provider: ProviderKind): ProviderAccountVersion {
  const accountId = randomUUID();
  return {
    account_id: accountId,
    tenant_id: tenantId,
    provider,
    account_key: `key-${accountId}`,
    beneficiary: {
      name: 'Escola Exemplo',
      tax_id: '11.222.333/0001-81',
      city: 'Curitiba',
      pix_key: null,
      agency: null,
      account: null,
      address: null,
    },
    base_url: null,
    sealed_credentials: provider === 'inter' ? 'v1.sealed-in-tests.not-opened.x' : null,
  };
}

/** 2026-11-27 15:00 in Brasília (UTC-3, no daylight saving time since 2019). */
const AFTERNOON = new Date('2026-11-27T18:00:00Z');
const TODAY = '2026-11-27';

/** Payers as a test sets them, per tenant. */
class Payers implements ClientDirectory {
  private readonly payers = new Map<string, Payer>();

  add(overrides: Partial<Payer> = {}): string {
    const clientId = randomUUID();
    this.payers.set(clientId, {
      clientId,
      name: 'Maria da Silva',
      taxId: '529.982.247-25',
      address: 'Rua das Flores',
      number: '123',
      neighborhood: 'Centro',
      city: 'Florianópolis',
      state: 'SC',
      zipCode: '88010-000',
      email: 'maria@example.com',
      ...overrides,
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

async function refusal(promise: Promise<unknown>): Promise<FieldError[]> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceError);
  expect((err as ServiceError).code).toBe('validation_failed');
  return (err as ServiceError).errors ?? [];
}

async function storedCount(tenantId: string): Promise<number> {
  const r = await f.db
    .selectFrom('receivables')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

function item(clientId: string, overrides: Partial<ReceivableCreateItem> = {}): ReceivableCreateItem {
  return {
    url_callback: 'https://erp.example.com/callbacks',
    client_id: clientId,
    payment_slip_id: randomUUID(),
    account_receivable_id: randomUUID(),
    payment_method: 1,
    due_date: '2026-12-20',
    emission_date: TODAY,
    value: 100,
    discount_type: 'NaoTemDesconto',
    ...overrides,
  };
}

describe('an inter account refuses at intake what Inter refuses, in our field names', () => {
  it('a payer without the address Inter requires: /<index>/client_id naming our client fields; nothing stored', async () => {
    const tenantId = randomUUID();
    const payers = new Payers();
    const complete = payers.add();
    const noAddress = payers.add({ address: null, zipCode: '', state: null });
    const noCity = payers.add({ city: '   ' });
    const longName = payers.add({
      name: 'N'.repeat(101),
      neighborhood: 'B'.repeat(61),
      email: `${'e'.repeat(45)}@x.com.br`,
    });
    const shortZip = payers.add({ zipCode: '8801-00' });
    const longNumber = payers.add({ number: '12345678901' });
    const errors = await refusal(
      acceptReceivables(
        f.db,
        payers,
        tenantId,
        accountVersion(tenantId, 'inter'),
        [item(complete), item(noAddress), item(noCity), item(longName), item(shortZip), item(longNumber)],
        AFTERNOON,
      ),
    );
    expect(errors.map((e) => e.path)).toEqual([
      '/1/client_id',
      '/2/client_id',
      '/3/client_id',
      '/4/client_id',
      '/5/client_id',
    ]);
    const [address, city, long, zip, number] = errors.map((e) => e.message);
    expect(address).toMatch(/missing address, state, zip_code/);
    expect(city).toMatch(/missing city/);
    expect(long).toMatch(/name \(at most 100 characters\)/);
    expect(long).toMatch(/neighborhood \(at most 60 characters\)/);
    expect(long).toMatch(/email \(at most 50 characters\)/);
    expect(zip).toMatch(/zip_code \(8 digits\)/);
    expect(number).toMatch(/number \(at most 10 characters\)/);
    // Our names, never Inter's.
    for (const e of errors) expect(e.message).not.toMatch(/pagador|endereco|cidade|cep\b|\buf\b/);
    expect(await storedCount(tenantId)).toBe(0);
  });

  it('value: 2.50 is the least and 99999999.99 the most Inter issues', async () => {
    const tenantId = randomUUID();
    const payers = new Payers();
    const client = payers.add();
    const account = accountVersion(tenantId, 'inter');
    const errors = await refusal(
      acceptReceivables(
        f.db,
        payers,
        tenantId,
        account,
        [
          item(client, { value: 2.49 }),
          item(client, { value: 2.5 }),
          item(client, { value: 100_000_000 }),
          item(client, { value: 0.01 }),
        ],
        AFTERNOON,
      ),
    );
    expect(errors.map((e) => e.path)).toEqual(['/0/value', '/2/value', '/3/value']);
    expect(await storedCount(tenantId)).toBe(0);
    await expect(
      acceptReceivables(
        f.db,
        payers,
        tenantId,
        account,
        [item(client, { value: 2.5 }), item(client, { value: 99_999_999.99 })],
        AFTERNOON,
      ),
    ).resolves.toEqual({ created: 2, alreadyExisting: 0, existing: [] });
  });

  it('due_date: not in the past; today only until 19:59 Brasília time', async () => {
    const tenantId = randomUUID();
    const payers = new Payers();
    const client = payers.add();
    const account = accountVersion(tenantId, 'inter');
    const yesterday = item(client, { due_date: '2026-11-26', emission_date: '2026-11-20' });
    const today = item(client, { due_date: TODAY });
    // 19:59 in Brasília is 22:59 UTC: still today's.
    await expect(
      acceptReceivables(f.db, payers, tenantId, account, [today], new Date('2026-11-27T22:59:30Z')),
    ).resolves.toEqual({ created: 1, alreadyExisting: 0, existing: [] });
    const late = await refusal(
      acceptReceivables(
        f.db,
        payers,
        tenantId,
        account,
        [item(client, { due_date: TODAY }), yesterday],
        new Date('2026-11-27T23:00:00Z'),
      ),
    );
    expect(late.map((e) => e.path)).toEqual(['/0/due_date', '/1/due_date']);
    // At 01:00 UTC on the 28th it is still the 27th in Brasília (22:00): due today, too late.
    const night = await refusal(
      acceptReceivables(
        f.db,
        payers,
        tenantId,
        account,
        [item(client, { due_date: TODAY })],
        new Date('2026-11-28T01:00:00Z'),
      ),
    );
    expect(night.map((e) => e.path)).toEqual(['/0/due_date']);
    expect(await storedCount(tenantId)).toBe(1);
  });

  it('errors of several fields and items come together, in batch order', async () => {
    const tenantId = randomUUID();
    const payers = new Payers();
    const bad = payers.add({ zipCode: null });
    const good = payers.add();
    const errors = await refusal(
      acceptReceivables(
        f.db,
        payers,
        tenantId,
        accountVersion(tenantId, 'inter'),
        [item(good), item(bad, { value: 1, due_date: '2026-01-01', emission_date: '2026-01-01' })],
        AFTERNOON,
      ),
    );
    expect(errors.map((e) => e.path)).toEqual(['/1/client_id', '/1/value', '/1/due_date']);
  });

  it('an id the tenant already used is left as it is, not refused: a retried batch is answered as before', async () => {
    const tenantId = randomUUID();
    const payers = new Payers();
    const client = payers.add();
    const account = accountVersion(tenantId, 'inter');
    const sameDay = item(client, { due_date: TODAY });
    await acceptReceivables(f.db, payers, tenantId, account, [sameDay], AFTERNOON);
    // The ERP retries after 20:00: the stored charge is not refused; a new one due today is.
    const fresh = item(client, { due_date: TODAY });
    const errors = await refusal(
      acceptReceivables(f.db, payers, tenantId, account, [sameDay, fresh], new Date('2026-11-27T23:30:00Z')),
    );
    expect(errors.map((e) => e.path)).toEqual(['/1/due_date']);
    await expect(
      acceptReceivables(f.db, payers, tenantId, account, [sameDay], new Date('2026-11-27T23:30:00Z')),
    ).resolves.toEqual({ created: 0, alreadyExisting: 1, existing: [sameDay.account_receivable_id] });
  });

  it('a sandbox account takes the same charges', async () => {
    const tenantId = randomUUID();
    const payers = new Payers();
    const noAddress = payers.add({ address: null, city: null, state: null, zipCode: null });
    await expect(
      acceptReceivables(
        f.db,
        payers,
        tenantId,
        accountVersion(tenantId, 'sandbox'),
        [item(noAddress, { value: 1 }), item(noAddress, { due_date: '2026-11-01', emission_date: '2026-11-01' })],
        AFTERNOON,
      ),
    ).resolves.toEqual({ created: 2, alreadyExisting: 0, existing: [] });
  });
});
