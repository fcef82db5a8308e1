import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { ProviderAccountVersion, ProviderKind, ReceivableCreateItem } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import { createMetricsRegistry } from '@payments/metrics';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { ReceivablesDatabase } from '../src/db/schema';
import { receivableHistory } from '../src/domain/history';
import { acceptReceivables } from '../src/domain/intake';
import {
  ProviderUnavailableError,
  type BatchRegistrationOutcome,
  type CancellationOutcome,
  type ChargeRequest,
  type ClientDirectory,
  type Payer,
  type PaymentProvider,
  type ProviderAccount,
  type ProviderChargeState,
} from '../src/domain/ports';
import { registrationHealth, watchRegistrationWaits } from '../src/domain/registration-waits';
import { stuckRegistrationMetrics } from '../src/transport/stuck-metrics';

/*
 * A charge stuck on an unreachable bank is visible: each attempt the bank does not take is
 * recorded on the charge (history entries without a state change), the operator's registration health
 * lists it per bank account with the oldest age and the bank's last answer, and the metric counts the
 * charges waiting longer than 5 minutes per provider kind. Real Postgres; the bank is a test double
 * of the adapter port.
 */

const db = {} as { k: Kysely<ReceivablesDatabase> };
let drop: () => Promise<void>;
const logger = createLogger('registration-waits-test', 'silent');

beforeAll(async () => {
  const test = await createTestDatabase();
  drop = test.drop;
  db.k = createDatabase<ReceivablesDatabase>({ url: test.url, schema: SCHEMA, poolSize: 2 });
  await migrateToLatest(db.k, SCHEMA, migrations);
});

afterAll(async () => {
  await db.k?.destroy();
  await drop?.();
});

const payer: Payer = {
  clientId: randomUUID(),
  name: 'Maria da Silva',
  taxId: '529.982.247-25',
  address: 'Rua das Flores',
  number: '12',
  neighborhood: 'Centro',
  city: 'Florianópolis',
  state: 'SC',
  zipCode: '88010-000',
  email: null,
};
const directory: ClientDirectory = { find: async () => new Map([[payer.clientId.toLowerCase(), payer]]) };

function accountVersion(tenantId: string, provider: ProviderKind): ProviderAccountVersion {
  const accountId = randomUUID();
  return {
    account_id: accountId,
    tenant_id: tenantId,
    provider,
    account_key: `key-${accountId}`,
    beneficiary: {
      name: 'Escola',
      tax_id: '11.222.333/0001-81',
      city: null,
      pix_key: null,
      agency: null,
      account: null,
      address: null,
    },
    base_url: provider === 'inter' ? 'https://127.0.0.1:9/inter' : null,
    sealed_credentials: null,
  };
}

function item(overrides: Partial<ReceivableCreateItem> = {}): ReceivableCreateItem {
  return {
    url_callback: 'https://erp.example.com/callbacks',
    client_id: payer.clientId,
    payment_slip_id: randomUUID(),
    account_receivable_id: randomUUID(),
    payment_method: 1,
    due_date: '2099-12-20',
    emission_date: '2026-11-27',
    value: 100,
    discount_type: 'NaoTemDesconto',
    ...overrides,
  };
}

/** A bank that does not answer registrations, or answers some as not issued yet; everything else works. */
class UnreachableBank implements PaymentProvider {
  mode: 'down' | 'not-issued' = 'down';
  readonly cancelled: string[] = [];
  async registerMany(_account: ProviderAccount, requests: ChargeRequest[]): Promise<BatchRegistrationOutcome[]> {
    if (this.mode === 'down') throw new ProviderUnavailableError('connect ECONNREFUSED 127.0.0.1:9');
    return requests.map(() => ({ kind: 'unavailable', reason: 'the bank has not issued the charge yet' }));
  }
  async cancel(_account: ProviderAccount, chargeId: string): Promise<CancellationOutcome> {
    this.cancelled.push(chargeId);
    return 'cancelled';
  }
  async consult(): Promise<ProviderChargeState> {
    return { kind: 'open' };
  }
  async slipPdf(): Promise<Buffer> {
    return Buffer.from('%PDF');
  }
}

async function accept(account: ProviderAccountVersion, count: number): Promise<Array<{ id: string; erpId: string }>> {
  const items = Array.from({ length: count }, () => item());
  await acceptReceivables(db.k, directory, account.tenant_id, account, items);
  const rows = await db.k
    .selectFrom('receivables')
    .select(['id', 'account_receivable_id'])
    .where('tenant_id', '=', account.tenant_id)
    .execute();
  return rows.map((r) => ({ id: r.id, erpId: r.account_receivable_id }));
}

const requestsFor = (ids: string[]) => ids.map((id) => ({ idempotencyKey: id }) as ChargeRequest);

it('each attempt the bank does not take is counted on the charge; its history shows attempts 1, 2, 4 without a state change', async () => {
  const tenantId = randomUUID();
  const account = accountVersion(tenantId, 'inter');
  const [charge] = await accept(account, 1);
  const bank = new UnreachableBank();
  const watched = watchRegistrationWaits({ sandbox: bank, inter: bank, pix: bank }, db.k, logger);
  const stored = await db.k
    .selectFrom('provider_accounts')
    .selectAll()
    .where('id', '=', account.account_id)
    .executeTakeFirstOrThrow();
  const providerAccount = { id: stored.id, provider: 'inter' } as ProviderAccount;
  for (let attempt = 1; attempt <= 5; attempt++)
    await expect(watched.inter.registerMany(providerAccount, requestsFor([charge!.id]))).rejects.toThrow(
      ProviderUnavailableError,
    );
  bank.mode = 'not-issued';
  await expect(watched.inter.registerMany(providerAccount, requestsFor([charge!.id]))).resolves.toEqual([
    { kind: 'unavailable', reason: 'the bank has not issued the charge yet' },
  ]);

  const row = await db.k
    .selectFrom('receivables')
    .select(['state', 'registration_status', 'registration_attempts', 'registration_last_error'])
    .where('id', '=', charge!.id)
    .executeTakeFirstOrThrow();
  expect(row).toEqual({
    state: 'pending',
    registration_status: 'queued',
    registration_attempts: 6,
    registration_last_error: 'the bank has not issued the charge yet',
  });
  const history = await receivableHistory(db.k, tenantId, charge!.erpId);
  expect(history.items.map((h) => [h.from_state, h.to_state, h.reason])).toEqual([
    [null, 'pending', 'received'],
    [
      'pending',
      'pending',
      'registration waiting (attempt 1): the bank did not answer: connect ECONNREFUSED 127.0.0.1:9',
    ],
    [
      'pending',
      'pending',
      'registration waiting (attempt 2): the bank did not answer: connect ECONNREFUSED 127.0.0.1:9',
    ],
    [
      'pending',
      'pending',
      'registration waiting (attempt 4): the bank did not answer: connect ECONNREFUSED 127.0.0.1:9',
    ],
  ]);
});

it('a charge no longer queued is left alone; the adapter’s other calls pass through unchanged', async () => {
  const tenantId = randomUUID();
  const account = accountVersion(tenantId, 'sandbox');
  const [charge] = await accept(account, 1);
  await db.k
    .updateTable('receivables')
    .set({ registration_status: 'registered' })
    .where('id', '=', charge!.id)
    .execute();
  const bank = new UnreachableBank();
  const watched = watchRegistrationWaits({ sandbox: bank, inter: bank, pix: bank }, db.k, logger);
  await expect(
    watched.sandbox.registerMany({ id: account.account_id } as ProviderAccount, requestsFor([charge!.id])),
  ).rejects.toThrow();
  const row = await db.k
    .selectFrom('receivables')
    .select('registration_attempts')
    .where('id', '=', charge!.id)
    .executeTakeFirstOrThrow();
  expect(row.registration_attempts).toBe(0);
  // `this` stays the adapter's own.
  await expect(watched.sandbox.cancel({ id: account.account_id } as ProviderAccount, 'chg-1', 'why')).resolves.toBe(
    'cancelled',
  );
  expect(bank.cancelled).toEqual(['chg-1']);
});

it('the health lists charges waiting per bank account, oldest first; the metric counts those waiting over 5 minutes', async () => {
  const tenantId = randomUUID();
  const account = accountVersion(tenantId, 'inter');
  const charges = await accept(account, 3);
  const bank = new UnreachableBank();
  const watched = watchRegistrationWaits({ sandbox: bank, inter: bank, pix: bank }, db.k, logger);
  await watched.inter
    .registerMany({ id: account.account_id } as ProviderAccount, requestsFor(charges.map((c) => c.id)))
    .catch(() => undefined);
  // Two of them were accepted 10 and 20 minutes ago.
  await sql`update receivables set created_at = now() - interval '10 minutes' where id = ${charges[0]!.id}`.execute(
    db.k,
  );
  await sql`update receivables set created_at = now() - interval '20 minutes' where id = ${charges[1]!.id}`.execute(
    db.k,
  );

  const health = await registrationHealth(db.k);
  const mine = health.accounts.find((a) => a.tenant_id === tenantId);
  expect(health.stuck_after_seconds).toBe(300);
  expect(mine).toMatchObject({
    provider: 'inter',
    account_key: account.account_key,
    base_url: 'https://127.0.0.1:9/inter',
    waiting: 3,
    stuck: 2,
    attempts: 1,
    last_error: 'the bank did not answer: connect ECONNREFUSED 127.0.0.1:9',
  });
  expect(mine!.oldest_age_seconds).toBeGreaterThanOrEqual(20 * 60);
  expect(mine!.oldest_age_seconds).toBeLessThan(21 * 60);
  // Longest waiting first.
  const ages = health.accounts.map((a) => a.oldest_age_seconds);
  expect([...ages].sort((a, b) => b - a)).toEqual(ages);

  const registry = createMetricsRegistry('receivables-test');
  stuckRegistrationMetrics(registry, { db: db.k, logger });
  const text = await registry.metrics();
  expect(text).toMatch(/^receivables_registrations_stuck\{provider="inter",service="receivables-test"\} 2$/m);
  expect(text).toMatch(/^receivables_registrations_stuck\{provider="sandbox",service="receivables-test"\} 0$/m);
  const oldest =
    /^receivables_registration_oldest_wait_seconds\{provider="inter",service="receivables-test"\} (\d+)$/m.exec(text);
  expect(Number(oldest?.[1])).toBeGreaterThanOrEqual(20 * 60);
});
