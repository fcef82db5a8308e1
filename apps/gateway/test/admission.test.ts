import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { ServiceError } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { GatewayDatabase } from '../src/db/schema';
import { Admissions } from '../src/transport/http/admission';
import type { GatewayContext } from '../src/transport/http/context';
import { fingerprint } from '../src/domain/idempotency/idempotency';
import { IdempotencyStore, type RequestIdentity } from '../src/db/idempotency-store';

// The door of every API operation against a real Postgres: the rate-limit charge and the
// Idempotency-Key's claim of concurrent requests share transactions. Rows inserted by one
// transaction share its id (xmin), which is how the commits are counted here.

let db: Kysely<GatewayDatabase>;
let drop: () => Promise<void>;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  db = createDatabase<GatewayDatabase>({ url: database.url, schema: SCHEMA, poolSize: 4 });
  await migrateToLatest(db, SCHEMA, migrations);
});
afterAll(async () => {
  await db?.destroy();
  await drop?.();
});

function context(tenantId: string): GatewayContext {
  return { state: { tenantId }, set: () => undefined } as unknown as GatewayContext;
}

function identity(tenantId: string, key = randomUUID(), body: unknown = { n: 1 }): RequestIdentity {
  const path = '/api/v1/accounts-receivable';
  return { tenantId, key, method: 'POST', path, fingerprint: fingerprint('POST', path, body) };
}

/** How many transactions inserted the tenant's idempotency records. */
async function claimCommits(tenantId: string): Promise<{ keys: number; transactions: number }> {
  const { rows } = await sql<{ keys: string; transactions: string }>`
    select count(*) as keys, count(distinct xmin::text) as transactions
    from idempotency_keys where tenant_id = ${tenantId}::uuid`.execute(db);
  return { keys: Number(rows[0].keys), transactions: Number(rows[0].transactions) };
}

const admissions = (perSecond: number, burst: number) =>
  new Admissions(db, { perSecond, burst }, new IdempotencyStore(db, 24, 60_000));

it('admits a lone request at once, in a transaction of its own', async () => {
  const tenantId = randomUUID();
  await expect(admissions(100, 100).admit(context(tenantId), 1, identity(tenantId))).resolves.toMatchObject({
    kind: 'claimed',
  });
  expect(await claimCommits(tenantId)).toEqual({ keys: 1, transactions: 1 });
});

it('writes a lock token of its own with each claim: only that attempt may complete the key', async () => {
  const store = new IdempotencyStore(db, 24, 60_000);
  const door = new Admissions(db, { perSecond: 100, burst: 100 }, store);
  const tenantId = randomUUID();
  const ids = [identity(tenantId), identity(tenantId)];
  const begun = await Promise.all(ids.map((id) => door.admit(context(tenantId), 1, id)));
  const holds = begun.map((b) => (b?.kind === 'claimed' ? b.hold : undefined));
  const rows = await db
    .selectFrom('idempotency_keys')
    .select(['key', 'lock_token'])
    .where('tenant_id', '=', tenantId)
    .execute();
  const tokenOf = (key: string) => rows.find((r) => r.key === key)?.lock_token;
  expect(holds.map((h) => h?.token)).toEqual(ids.map((id) => tokenOf(id.key)));
  expect(new Set(holds.map((h) => h?.token)).size).toBe(2);
  expect(holds.every((h) => h?.token && /^[0-9a-f-]{36}$/.test(h.token))).toBe(true);
  // The other attempt's hold, same lock time, other token: it does not hold this key.
  const [first, second] = holds;
  if (!first || !second) throw new Error('both requests should have claimed their key');
  const response = { status: 202, body: '{}', headers: {} };
  await expect(store.complete(ids[0], { ...first, token: second.token }, response)).resolves.toBe('stale');
  await expect(store.complete(ids[0], first, response)).resolves.toBe('done');
});

it('admits concurrent requests of several tenants in shared commits, each its own claim', async () => {
  const door = admissions(1_000, 1_000);
  const tenants = [randomUUID(), randomUUID()];
  const requests = Array.from({ length: 60 }, (_, i) => tenants[i % 2]);
  const outcomes = await Promise.all(requests.map((t) => door.admit(context(t), 1, identity(t))));
  expect(outcomes.every((o) => o?.kind === 'claimed')).toBe(true);
  for (const t of tenants) {
    const { keys, transactions } = await claimCommits(t);
    expect(keys).toBe(30);
    // Two batches run at once and the rest gather behind them: a handful of commits, not 30.
    expect(transactions).toBeLessThanOrEqual(6);
  }
});

it('claims a key sent twice at once for the first request only: the second is told it is in progress', async () => {
  const door = admissions(1_000, 1_000);
  const tenantId = randomUUID();
  const key = randomUUID();
  // Two admissions run at once: the first two requests take both, so the three with the key gather
  // behind them into one batch (in separate batches, which of them claims it would be a race).
  const outcomes = await Promise.all([
    door.admit(context(tenantId), 1, identity(tenantId)),
    door.admit(context(tenantId), 1, identity(tenantId)),
    door.admit(context(tenantId), 1, identity(tenantId, key)),
    door.admit(context(tenantId), 1, identity(tenantId, key)),
    door.admit(context(tenantId), 1, identity(tenantId, key, { n: 2 })),
  ]);
  expect(outcomes.map((o) => o?.kind)).toEqual(['claimed', 'claimed', 'claimed', 'in_progress', 'mismatch']);
});

it('charges the tenant in arrival order within a batch, and a refused request claims nothing', async () => {
  const door = admissions(0.001, 10);
  const tenantId = randomUUID();
  // Two admissions run at once: another tenant's two requests take both, so all 15 of this tenant's
  // gather into one batch (across batches running at once, which locks the bucket first is a race).
  const other = randomUUID();
  const holding = [door.admit(context(other), 1), door.admit(context(other), 1)];
  const results = await Promise.all(
    Array.from({ length: 15 }, () =>
      door.admit(context(tenantId), 1, identity(tenantId)).then(
        (o) => o?.kind,
        (err: unknown) => (err instanceof ServiceError ? err.code : String(err)),
      ),
    ),
  );
  await Promise.all(holding);
  expect(results).toEqual([...Array(10).fill('claimed'), ...Array(5).fill('rate_limited')]);
  expect((await claimCommits(tenantId)).keys).toBe(10);
});

it('never spends the same tokens twice across two gateways admitting at once', async () => {
  const tenantId = randomUUID();
  const doors = [admissions(0.001, 25), admissions(0.001, 25)];
  const results = await Promise.allSettled(
    Array.from({ length: 60 }, (_, i) => doors[i % 2].admit(context(tenantId), 1, identity(tenantId))),
  );
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(25);
  expect((await claimCommits(tenantId)).keys).toBe(25);
});

it('writes the completions of requests finishing together in shared commits', async () => {
  const store = new IdempotencyStore(db, 24, 60_000);
  const door = new Admissions(db, { perSecond: 0, burst: 1 }, store);
  const tenantId = randomUUID();
  const ids = Array.from({ length: 40 }, () => identity(tenantId));
  const begun = await Promise.all(ids.map((id) => door.admit(context(tenantId), 1, id)));
  await Promise.all(
    ids.map((id, i) => {
      const claim = begun[i];
      if (claim?.kind !== 'claimed') throw new Error(`request ${i} did not claim its key`);
      return store.complete(id, claim.hold, { status: 202, body: `{"n":${i}}`, headers: {} });
    }),
  );
  const { rows } = await sql<{ done: string; transactions: string }>`
    select count(*) filter (where status_code = 202 and locked_at is null) as done, count(distinct xmin::text) as transactions
    from idempotency_keys where tenant_id = ${tenantId}::uuid`.execute(db);
  expect(Number(rows[0].done)).toBe(40);
  expect(Number(rows[0].transactions)).toBeLessThanOrEqual(4);
  await expect(store.begin(ids[7])).resolves.toEqual({
    kind: 'replay',
    response: { status: 202, body: '{"n":7}', headers: {} },
  });
});
