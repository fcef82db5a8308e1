import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { GatewayDatabase } from '../src/db/schema';
import { fingerprint } from '../src/domain/idempotency/idempotency';
import { IdempotencyStore, type RequestIdentity } from '../src/db/idempotency-store';

/**
 * Idempotency keys past IDEMPOTENCY_TTL_HOURS go by the sweep in bounded batches; the previous
 * release's statements still run on the migrated schema.
 */

let db: Kysely<GatewayDatabase>;
let drop: () => Promise<void>;
let url: string;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  url = database.url;
  db = createDatabase<GatewayDatabase>({ url, schema: SCHEMA, poolSize: 3 });
  await migrateToLatest(db, SCHEMA, migrations);
});
afterAll(async () => {
  await db?.destroy();
  await drop?.();
});
beforeEach(async () => {
  await sql`delete from idempotency_keys`.execute(db);
});

const store = () => new IdempotencyStore(db, 24, 30_000);
const identity = (tenantId = randomUUID()): RequestIdentity => ({
  tenantId,
  key: randomUUID(),
  method: 'POST',
  path: '/api/v1/clients',
  fingerprint: fingerprint('POST', '/api/v1/clients', [{ client_id: 'x' }]),
});

/** Claims and answers `count` keys, as requests do; their rows, as stored. */
async function answered(count: number): Promise<RequestIdentity[]> {
  const s = store();
  const ids = Array.from({ length: count }, () => identity());
  for (const id of ids) {
    const begun = await s.begin(id);
    if (begun.kind !== 'claimed') throw new Error(`not claimed: ${begun.kind}`);
    expect(await s.complete(id, begun.hold, { status: 201, body: '{}', headers: {} })).toBe('done');
  }
  return ids;
}

/** The i-th of `ids`, which the test made. */
function nth(ids: readonly RequestIdentity[], i: number): RequestIdentity {
  const id = ids[i];
  if (!id) throw new Error(`no key ${i}`);
  return id;
}

/** A promise and what settles it. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function expire(ids: readonly RequestIdentity[], hoursAgo = 1): Promise<void> {
  for (const id of ids)
    await sql`update idempotency_keys set expires_at = now() - make_interval(hours => ${hoursAgo})
      where tenant_id = ${id.tenantId} and key = ${id.key}`.execute(db);
}

async function keysLeft(): Promise<string[]> {
  const { rows } = await sql<{ key: string }>`select key from idempotency_keys order by key`.execute(db);
  return rows.map((r) => r.key);
}

it('deletes only expired keys, a batch at a time, and at most the batches it is given per run', async () => {
  const ids = await answered(7);
  const live = nth(ids, 0);
  await expire(ids.slice(1));
  // 2 batches of 2: four of the six expired keys go, the rest at the next run.
  expect(await store().deleteExpired(2, 2)).toBe(4);
  expect(await keysLeft()).toHaveLength(3);
  expect(await store().deleteExpired(2, 10)).toBe(2);
  expect(await keysLeft()).toEqual([live.key]);
  expect(await store().deleteExpired()).toBe(0);
});

it('deletes the oldest first', async () => {
  const ids = await answered(2);
  await expire([nth(ids, 0)], 5);
  await expire([nth(ids, 1)], 1);
  expect(await store().deleteExpired(1, 1)).toBe(1);
  expect(await keysLeft()).toEqual([nth(ids, 1).key]);
});

it('a key swept after its expiry runs its request again (its answer is no longer replayed)', async () => {
  const id = nth(await answered(1), 0);
  expect((await store().begin(id)).kind).toBe('replay');
  await expire([id]);
  await store().deleteExpired();
  expect((await store().begin(id)).kind).toBe('claimed');
});

it('skips a key another transaction holds, without waiting for it, and takes it at the next run', async () => {
  const ids = await answered(2);
  const held = nth(ids, 0);
  await expire(ids);
  const other = createDatabase<GatewayDatabase>({ url, schema: SCHEMA, poolSize: 1 });
  try {
    const released = signal();
    const locked = signal();
    const holding = other.transaction().execute(async (trx) => {
      await sql`select 1 from idempotency_keys where key = ${held.key} for update`.execute(trx);
      locked.resolve();
      await released.promise;
    });
    await locked.promise;
    const started = performance.now();
    expect(await store().deleteExpired()).toBe(1);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await keysLeft()).toEqual([held.key]);
    released.resolve();
    await holding;
    expect(await store().deleteExpired()).toBe(1);
    expect(await keysLeft()).toEqual([]);
  } finally {
    await other.destroy();
  }
});

it('the hot tables carry their own autovacuum settings', async () => {
  const { rows } = await sql<{ relname: string; options: string[] }>`
    select c.relname, c.reloptions as options from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${SCHEMA} and c.relname in ('idempotency_keys', 'rate_limit_buckets') order by 1`.execute(db);
  expect(rows.map((r) => [r.relname, r.options])).toEqual([
    ['idempotency_keys', expect.arrayContaining(['autovacuum_vacuum_scale_factor=0.01', 'fillfactor=80'])],
    ['rate_limit_buckets', expect.arrayContaining(['autovacuum_vacuum_scale_factor=0', 'fillfactor=50'])],
  ]);
});

describe('the previous release on the migrated schema', () => {
  // Its statements, as apps/gateway/src of v0.28.0 sends them (db/admit-requests.ts,
  // db/idempotency-store.ts): the claim with lock tokens, the completion, the sweep.
  it('claims, completes and sweeps its keys', async () => {
    const tenant = randomUUID();
    const key = randomUUID();
    const token = randomUUID();
    const now = new Date();
    const expires = new Date(now.getTime() - 1_000);
    const claim = () =>
      sql<{ taken: boolean; claimed: boolean; status_code: number | null }>`
        select * from admit_requests(${['tenant:' + tenant]}::text[], ${[1]}::float8[], 100, 100,
          ${[tenant]}::uuid[], ${[key]}::text[], ${['POST']}::text[], ${['/api/v1/clients']}::text[],
          ${['fp']}::text[], ${[token]}::uuid[], ${now}, ${expires})`.execute(db);
    const first = await claim();
    expect(first.rows[0]).toMatchObject({ taken: true, claimed: true });
    const done = await sql`update idempotency_keys as k set locked_at = null, lock_token = null, status_code = 201,
        response_body = '{}', response_headers = '{}'::jsonb
      where k.tenant_id = ${tenant} and k.key = ${key} and k.locked_at = ${now} and k.lock_token = ${token}`.execute(
      db,
    );
    expect(Number(done.numAffectedRows)).toBe(1);
    const swept = await sql`delete from idempotency_keys where expires_at < now()`.execute(db);
    expect(Number(swept.numAffectedRows)).toBe(1);
    expect(await keysLeft()).toEqual([]);
  });
});
