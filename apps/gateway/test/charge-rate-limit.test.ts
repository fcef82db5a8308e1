import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { ServiceError } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import { admitRequests, deleteFullBuckets, type BucketShape } from '../src/db/admit-requests';
import type { GatewayDatabase } from '../src/db/schema';
import type { GatewayContext } from '../src/transport/http/context';
import { tenantChargeLimit } from '../src/transport/http/rate-limit';

// The per-tenant charge limit against a real Postgres. Two gateway instances are two
// connection pools to the same database: they must spend one budget.

let first: Kysely<GatewayDatabase>;
let second: Kysely<GatewayDatabase>;
let drop: () => Promise<void>;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  first = createDatabase<GatewayDatabase>({ url: database.url, schema: SCHEMA, poolSize: 4 });
  second = createDatabase<GatewayDatabase>({ url: database.url, schema: SCHEMA, poolSize: 4 });
  await migrateToLatest(first, SCHEMA, migrations);
});
afterAll(async () => {
  await first?.destroy();
  await second?.destroy();
  await drop?.();
});

/** One take of `cost` tokens from the bucket `key`, with no key to claim: what the limit answered. */
async function takeTokens(db: Kysely<GatewayDatabase>, key: string, cost: number, shape: BucketShape) {
  const [answer] = await admitRequests(db, [{ bucket: key, cost }], shape, new Date(), 0);
  return answer.taken ? { ok: true as const } : { ok: false as const, retryAfterMs: answer.retryAfterMs };
}

/** Enough of a request for the limit: its tenant, and the headers it sets. */
function request(tenantId: string) {
  const headers: Record<string, string> = {};
  const ctx = { state: { tenantId }, set: (name: string, value: string) => (headers[name] = value) };
  return { ctx: ctx as unknown as GatewayContext, headers };
}

async function refusal(run: Promise<void>): Promise<ServiceError> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceError);
  return err as ServiceError;
}

it('counts charges: a batch costs its size, and what is left is for the next', async () => {
  const limit = tenantChargeLimit(first, { perSecond: 1, burst: 10 });
  const { ctx, headers } = request(randomUUID());
  await limit(ctx, 7);
  await limit(ctx, 3);
  const err = await refusal(limit(ctx, 2));
  expect(err.code).toBe('rate_limited');
  expect(err.detail).toBe('more than 1 charges per second (bursts of 10) for this tenant; retry later');
  expect(Number(headers['retry-after'])).toBeGreaterThanOrEqual(1);
});

it('is one budget for every gateway instance', async () => {
  const tenantId = randomUUID();
  const onFirst = tenantChargeLimit(first, { perSecond: 0.01, burst: 10 });
  const onSecond = tenantChargeLimit(second, { perSecond: 0.01, burst: 10 });
  await onFirst(request(tenantId).ctx, 6);
  expect((await refusal(onSecond(request(tenantId).ctx, 6))).code).toBe('rate_limited');
  await onSecond(request(tenantId).ctx, 4);
  // Another tenant has its own.
  await onSecond(request(randomUUID()).ctx, 10);
});

it('never spends the same tokens twice under concurrent takes from two instances', async () => {
  const key = `tenant:${randomUUID()}`;
  const shape = { perSecond: 0.001, burst: 25 };
  const takes = await Promise.all(
    Array.from({ length: 60 }, (_, i) => takeTokens(i % 2 ? first : second, key, 1, shape)),
  );
  expect(takes.filter((t) => t.ok)).toHaveLength(25);
});

it('refills at its rate, up to the burst', async () => {
  const key = `tenant:${randomUUID()}`;
  const shape = { perSecond: 20, burst: 10 };
  expect(await takeTokens(first, key, 10, shape)).toEqual({ ok: true });
  const empty = await takeTokens(first, key, 10, shape);
  expect(empty.ok).toBe(false);
  // 10 missing at 20 a second: about half a second.
  expect(empty.ok ? 0 : empty.retryAfterMs).toBeGreaterThan(300);
  expect(empty.ok ? 0 : empty.retryAfterMs).toBeLessThanOrEqual(500);
  await new Promise((r) => setTimeout(r, 600));
  expect(await takeTokens(first, key, 10, shape)).toEqual({ ok: true });
  await new Promise((r) => setTimeout(r, 1_500));
  // Never more than the burst, however long it rested.
  expect((await takeTokens(first, key, 11, shape)).ok).toBe(false);
});

it('refuses for good a request carrying more charges than the burst, saying so', async () => {
  const limit = tenantChargeLimit(first, { perSecond: 5_000, burst: 500 });
  const { ctx, headers } = request(randomUUID());
  const err = await refusal(limit(ctx, 1_000));
  expect(err.detail).toBe('this request carries 1000 charges, more than the 500 a tenant may send at once; split it');
  expect(headers['retry-after']).toBeUndefined();
  await limit(ctx, 500);
});

it('is off at 0 per second', async () => {
  const limit = tenantChargeLimit(first, { perSecond: 0, burst: 0 });
  const tenants = [randomUUID(), randomUUID(), randomUUID()];
  for (const tenantId of tenants) await limit(request(tenantId).ctx, 1_000_000);
  const buckets = await first.selectFrom('rate_limit_buckets').select('key').execute();
  expect(buckets.filter((b) => tenants.some((t) => b.key.endsWith(t)))).toEqual([]);
});

it("sweeps the client limits' buckets once idle long enough to be full, and nothing else", async () => {
  const shape = { perSecond: 1, burst: 60 };
  const [idle, busy, tenant] = [
    `auth-address:${randomUUID()}`,
    `auth-address:${randomUUID()}`,
    `tenant:${randomUUID()}`,
  ];
  for (const key of [idle, busy, tenant]) await takeTokens(first, key, 1, shape);
  await sql`update rate_limit_buckets set updated_at = now() - interval '2 minutes'
    where key in (${idle}, ${tenant})`.execute(first);
  expect(await deleteFullBuckets(first, ['auth-address', 'download-address'], 60_000)).toBeGreaterThanOrEqual(1);
  const left = await first
    .selectFrom('rate_limit_buckets')
    .select('key')
    .where('key', 'in', [idle, busy, tenant])
    .execute();
  expect(left.map((b) => b.key).sort()).toEqual([busy, tenant].sort());
});
