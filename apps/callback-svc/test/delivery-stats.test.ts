import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { createDatabase, createTestDatabase, ensureOnlineIndexesOnce, migrateToLatest } from '@payments/db';
import { DeliveryStatsStore } from '../src/db/delivery-stats-store';
import { migrations, onlineIndexes, SCHEMA } from '../src/db/migrations';
import type { CallbacksDatabase } from '../src/db/schema';
import {
  bucketOf,
  deliveryHealth,
  deliveryStats,
  DURATION_BOUNDS_MS,
  emptyHistogram,
  LATENCY_BOUNDS_MS,
  percentile,
} from '../src/domain/delivery-stats';
import { EventStore } from '../src/domain/event-store';
import { receivableIdOf } from '../src/transport/ingest';

// The delivery aggregates (migration 0007): the rollup from attempts and events into delivery_minutes,
// the statistics read from them, the replay of dead events and the list's receivable filter, against
// a real Postgres (a throw-away database, emptied before each test).

let test: { url: string; drop: () => Promise<void> };
let db: Kysely<CallbacksDatabase>;
let other: Kysely<CallbacksDatabase>;
let store: EventStore;
let stats: DeliveryStatsStore;

beforeAll(async () => {
  test = await createTestDatabase();
  db = createDatabase<CallbacksDatabase>({ url: test.url, schema: SCHEMA, poolSize: 4 });
  // A second pool: another instance of the service.
  other = createDatabase<CallbacksDatabase>({ url: test.url, schema: SCHEMA, poolSize: 2 });
  await migrateToLatest(db, SCHEMA, migrations);
  // As the service builds them after migrating (in the background there): these queries run with them.
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  expect(await ensureOnlineIndexesOnce(db, SCHEMA, onlineIndexes, quiet)).toEqual({
    status: 'done',
    built: onlineIndexes.map((i) => i.name),
  });
  store = new EventStore(db);
  stats = new DeliveryStatsStore(db);
});
afterAll(async () => {
  await other?.destroy();
  await db?.destroy();
  await test?.drop();
});
beforeEach(async () => {
  await sql`truncate attempts, events, event_log, event_keys, delivery_minutes, delivery_rollup`.execute(db);
});

const TENANT_A = '0a0a0a0a-0000-4000-8000-00000000000a';
const TENANT_B = '0b0b0b0b-0000-4000-8000-00000000000b';
const MINUTE = 60_000;

/** Postgres's now, truncated to the minute: the rollup's clock. */
async function dbMinute(): Promise<Date> {
  const { rows } = await sql<{ m: Date }>`select date_trunc('minute', now()) as m`.execute(db);
  return rows[0].m;
}

/** One stored event of `tenant` for `host`; returns its id. */
async function event(tenant: string, host: string, receivableId: string | null = null): Promise<string> {
  const eventId = `evt_${randomUUID().replace(/-/g, '')}`;
  await store.ingest(
    [{ eventId, tenantId: tenant, eventType: 'receivable.paid', url: `http://${host}/hook`, body: '{}', receivableId }],
    new Set(),
    60_000,
  );
  return eventId;
}

/** Attempts of one event at `at`, one per duration; `status` null: no HTTP answer. */
async function attempts(
  eventId: string,
  tenant: string,
  at: Date,
  durations: number[],
  status: number | null = 200,
  excerpt: string | null = null,
) {
  await db
    .insertInto('attempts')
    .values(
      durations.map((d, i) => ({
        event_id: eventId,
        tenant_id: tenant,
        attempted_at: new Date(at.getTime() + i),
        status_code: status,
        error: status !== null && status >= 200 && status < 300 ? null : status === null ? 'timeout' : `HTTP ${status}`,
        duration_ms: d,
        response_excerpt: excerpt,
      })),
    )
    .execute();
}

async function markDead(eventId: string, at: Date) {
  await db
    .updateTable('events')
    .set({ status: 'dead', dead_at: at, next_attempt_at: null })
    .where('event_id', '=', eventId)
    .execute();
}

/** An event's creation time, as the log and its key hold it (ingest stamps Postgres's now). */
async function setCreated(eventId: string, at: Date) {
  await db.updateTable('event_keys').set({ created_at: at }).where('event_id', '=', eventId).execute();
}

const minutes = () =>
  db.selectFrom('delivery_minutes').selectAll().orderBy('minute').orderBy('tenant_id').orderBy('target_host').execute();

/* Histogram ----------------------------------------------------------------------------------------- */

it('reads p50 and p99 of durations spread over the buckets exactly, and never above the longest', () => {
  const h = emptyHistogram();
  for (let d = 1; d <= 100; d++) h.counts[bucketOf(d)]++;
  h.maxMs = 100;
  expect(percentile(h, 0.5)).toBe(50);
  expect(percentile(h, 0.99)).toBe(99);
  expect(percentile(emptyHistogram(), 0.5)).toBeNull();
  // Beyond the last bound: the longest duration seen bounds the open bucket.
  const slow = emptyHistogram();
  slow.counts[DURATION_BOUNDS_MS.length] = 3;
  slow.maxMs = 90_000;
  expect(percentile(slow, 0.99)).toBe(90_000);
  expect(bucketOf(0)).toBe(0);
  expect(bucketOf(1)).toBe(0);
  expect(bucketOf(2)).toBe(1);
  expect(bucketOf(60_001)).toBe(DURATION_BOUNDS_MS.length);
});

it('reads end-to-end latencies past an hour from their own, wider bounds', () => {
  const h = emptyHistogram(LATENCY_BOUNDS_MS);
  h.counts[bucketOf(5_000_000, LATENCY_BOUNDS_MS)] = 1;
  h.maxMs = 5_000_000;
  expect(percentile(h, 0.5)).toBe(5_000_000);
  expect(bucketOf(5_000_000, LATENCY_BOUNDS_MS)).toBeLessThan(LATENCY_BOUNDS_MS.length);
});

/* Rollup -------------------------------------------------------------------------------------------- */

it('measures end-to-end latency from the event created to the end of the attempt that delivered it', async () => {
  const now = await dbMinute();
  const at = new Date(now.getTime() - 2 * MINUTE + 10_000);
  const slow = await event(TENANT_A, 'a.example');
  const quick = await event(TENANT_A, 'a.example');
  const old = await event(TENANT_B, 'b.example');
  // Created 90 s before its delivering attempt of 500 ms (after a failed one): 90.5 s end to end.
  await setCreated(slow, new Date(at.getTime() - 90_000));
  await attempts(slow, TENANT_A, new Date(at.getTime() - 5_000), [4_000], 503);
  await attempts(slow, TENANT_A, at, [500]);
  // Created 1.8 s before an attempt of 200 ms: 2 s.
  await setCreated(quick, new Date(at.getTime() - 1_800));
  await attempts(quick, TENANT_A, at, [200]);
  // Created three hours before its delivery, in the minute after.
  await setCreated(old, new Date(at.getTime() + MINUTE - 3 * 3_600_000));
  await attempts(old, TENANT_B, new Date(at.getTime() + MINUTE), [100]);

  expect(await stats.rollUp(3, 8)).toBe(true);
  const hour = await deliveryStats(stats, 'hour', undefined, new Date(now.getTime() + 30_000));
  const bucket = hour.series.find((b) => b.at === new Date(now.getTime() - 2 * MINUTE).toISOString());
  // The receiver answered in 200 and 500 ms (and failed after 4 s); the events waited far longer.
  expect(bucket).toMatchObject({ delivered: 2, failed: 1, end_to_end_p50_ms: 2_000, end_to_end_p99_ms: 90_500 });
  expect(bucket?.p99_ms).toBe(4_000);
  expect(hour.series.find((b) => b.at === new Date(now.getTime() - MINUTE).toISOString())).toMatchObject({
    delivered: 1,
    end_to_end_p50_ms: 3 * 3_600_000 + 100,
  });
  // Over the day, tenant A alone: its two deliveries only.
  const day = await deliveryStats(stats, 'day', TENANT_A, new Date(now.getTime() + 30_000));
  const withDeliveries = day.series.filter((b) => b.delivered > 0);
  expect(withDeliveries.map((b) => b.end_to_end_p99_ms)).toEqual([90_500]);
  // No deliveries, no latency.
  expect(hour.series[0]).toMatchObject({ end_to_end_p50_ms: null, end_to_end_p99_ms: null });
});

it('adds up attempts and dead events per minute, tenant and host, and reads p50/p99 of any span', async () => {
  const now = await dbMinute();
  const tenMinAgo = new Date(now.getTime() - 10 * MINUTE + 5_000);
  const fiveMinAgo = new Date(now.getTime() - 5 * MINUTE + 5_000);
  const fifteenMinAgo = new Date(now.getTime() - 15 * MINUTE + 5_000);
  const a1 = await event(TENANT_A, 'a.example');
  const a2 = await event(TENANT_A, 'b.example');
  const b1 = await event(TENANT_B, 'a.example');
  // Tenant A on a.example: 1..100 ms ten minutes ago (all 2xx), 3 failures five minutes ago.
  await attempts(
    a1,
    TENANT_A,
    tenMinAgo,
    Array.from({ length: 100 }, (_, i) => i + 1),
  );
  await attempts(a1, TENANT_A, fiveMinAgo, [400, 400, 400], 503, 'upstream down');
  // Tenant A on b.example: 2 timeouts fifteen minutes ago, then dead.
  await attempts(a2, TENANT_A, fifteenMinAgo, [10_000, 10_000], null);
  await markDead(a2, new Date(fifteenMinAgo.getTime() + 1_000));
  // Tenant B on a.example: 4 deliveries of 20 ms five minutes ago.
  await attempts(b1, TENANT_B, fiveMinAgo, [20, 20, 20, 20]);

  expect(await stats.rollUp(3, 8)).toBe(true);
  const rows = await minutes();
  expect(
    rows.map((r) => [r.minute.getTime() - now.getTime(), r.tenant_id, r.target_host, r.delivered, r.failed, r.dead]),
  ).toEqual([
    [-15 * MINUTE, TENANT_A, 'b.example', 0, 2, 1],
    [-10 * MINUTE, TENANT_A, 'a.example', 100, 0, 0],
    [-5 * MINUTE, TENANT_A, 'a.example', 0, 3, 0],
    [-5 * MINUTE, TENANT_B, 'a.example', 4, 0, 0],
  ]);

  const hour = await deliveryStats(stats, 'hour', undefined, new Date(now.getTime() + 30_000));
  expect(hour.series).toHaveLength(60);
  expect(hour.bucket_seconds).toBe(60);
  expect(hour.to).toBe(new Date(now.getTime() + MINUTE).toISOString());
  expect(hour.series[59].at).toBe(now.toISOString());
  const tenAgo = hour.series[49];
  expect(tenAgo).toEqual({
    at: new Date(now.getTime() - 10 * MINUTE).toISOString(),
    delivered: 100,
    failed: 0,
    dead: 0,
    // 1..100 ms: the histogram gives them back exactly.
    p50_ms: 50,
    p99_ms: 99,
    // The event was created after these back-dated attempts: a latency below 0 (clocks apart) counts as 0.
    end_to_end_p50_ms: 0,
    end_to_end_p99_ms: 0,
  });
  // Two timeouts of 10 s, in the bucket (8 s, 10 s]: read within it, never above the longest.
  expect(hour.series[44]).toMatchObject({ delivered: 0, failed: 2, dead: 1, p50_ms: 9000, p99_ms: 10_000 });
  expect(hour.series[54]).toMatchObject({ delivered: 4, failed: 3, dead: 0, p50_ms: 20, p99_ms: 400 });
  expect(hour.series.filter((b) => b.delivered + b.failed + b.dead > 0)).toHaveLength(3);
  expect(hour.series.filter((b) => b.p50_ms === null)).toHaveLength(57);

  // Only tenant A, over a day: 96 quarter hours; its minutes add up within them.
  const day = await deliveryStats(stats, 'day', TENANT_A, new Date(now.getTime() + 30_000));
  expect(day.series).toHaveLength(96);
  expect(day.bucket_seconds).toBe(900);
  const totals = day.series.reduce(
    (t, b) => ({ delivered: t.delivered + b.delivered, failed: t.failed + b.failed, dead: t.dead + b.dead }),
    { delivered: 0, failed: 0, dead: 0 },
  );
  expect(totals).toEqual({ delivered: 100, failed: 5, dead: 1 });

  const health = await deliveryHealth(stats, 'hour', new Date(now.getTime() + 30_000));
  expect(health.tenants.map((t) => [t.tenant_id, t.delivered, t.failed, t.dead])).toEqual([
    [TENANT_A, 100, 5, 1],
    [TENANT_B, 4, 0, 0],
  ]);
  expect(health.tenants[0].success_rate).toBeCloseTo(100 / 105);
  expect(health.tenants[0].last_error).toBe('HTTP 503: upstream down');
  expect(health.tenants[0].last_failure_at).toBe(new Date(fiveMinAgo.getTime() + 2).toISOString());
  // Worst host first: b.example never delivered.
  expect(health.hosts.map((h) => [h.host, h.delivered, h.failed, h.success_rate])).toEqual([
    ['b.example', 0, 2, 0],
    ['a.example', 104, 3, 104 / 107],
  ]);
  expect(health.hosts.map((h) => h.pending)).toEqual([0, 2]); // a1 and b1 still pending; a2 dead
});

it('counts events pending now in the health, with no attempts yet, and cuts last_error to 200 characters', async () => {
  const now = await dbMinute();
  await event(TENANT_B, 'c.example');
  await event(TENANT_B, 'c.example');
  const e = await event(TENANT_A, 'd.example');
  await attempts(e, TENANT_A, new Date(now.getTime() - MINUTE), [5], 500, '<b>'.repeat(300));
  await stats.rollUp(3, 8);
  const health = await deliveryHealth(stats, 'hour', new Date());
  expect(health.tenants.map((t) => [t.tenant_id, t.success_rate, t.pending])).toEqual([
    [TENANT_A, 0, 1],
    [TENANT_B, null, 2],
  ]);
  expect(health.tenants[0].last_error).toHaveLength(200);
  expect(health.tenants[0].last_error?.startsWith('HTTP 500: <b><b>')).toBe(true);
  expect(health.tenants[1]).toMatchObject({ delivered: 0, failed: 0, p99_ms: null, last_error: null });
});

it('rebuilds the same rows when run again, counts a late attempt, and keeps 8 days', async () => {
  const now = await dbMinute();
  const e = await event(TENANT_A, 'a.example');
  await attempts(e, TENANT_A, new Date(now.getTime() - 2 * MINUTE), [30, 40]);
  await db
    .insertInto('delivery_minutes')
    .values({
      minute: new Date(now.getTime() - 9 * 24 * 60 * MINUTE),
      tenant_id: TENANT_A,
      target_host: 'old.example',
      delivered: 1,
      failed: 0,
      dead: 0,
      duration_buckets: [3],
      duration_counts: [1],
      duration_max_ms: 4,
      last_failure_at: null,
      last_error: null,
    })
    .execute();
  await stats.rollUp(3, 8);
  const first = await minutes();
  expect(first.map((r) => [r.target_host, r.delivered])).toEqual([['a.example', 2]]);
  await stats.rollUp(3, 8);
  expect(await minutes()).toEqual(first);
  // Written after the minute's first rollup (an attempt is written when it ends): counted by the next.
  await attempts(e, TENANT_A, new Date(now.getTime() - 2 * MINUTE + 30_000), [50], 500);
  await stats.rollUp(3, 8);
  expect((await minutes()).map((r) => [r.delivered, r.failed, r.duration_max_ms])).toEqual([[2, 1, 50]]);
});

it('lets one instance roll up at a time: a run meeting the lock skips, and concurrent runs do not double count', async () => {
  const now = await dbMinute();
  const e = await event(TENANT_A, 'a.example');
  await attempts(e, TENANT_A, new Date(now.getTime() - MINUTE), [10, 10, 10]);
  const otherStats = new DeliveryStatsStore(other);
  // Another instance holds the lock (in the middle of its run): this one skips, writes nothing.
  await other.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(current_schema() || '.delivery_rollup'))`.execute(trx);
    expect(await stats.rollUp(3, 8)).toBe(false);
  });
  expect(await minutes()).toEqual([]);
  // Both at once, several times: whoever runs, the minute holds the 3 attempts once.
  for (let i = 0; i < 5; i++) {
    const ran = await Promise.all([stats.rollUp(3, 8), otherStats.rollUp(3, 8)]);
    expect(ran).toContain(true);
  }
  expect((await minutes()).map((r) => [r.delivered, r.duration_counts])).toEqual([[3, [3]]]);
});

/* Replay -------------------------------------------------------------------------------------------- */

it('replays only the dead events of that tenant that died in [since, until), as a retry does', async () => {
  const now = Date.now();
  const ago = (min: number) => new Date(now - min * MINUTE);
  const inWindow1 = await event(TENANT_A, 'a.example');
  const inWindow2 = await event(TENANT_A, 'b.example');
  const tooOld = await event(TENANT_A, 'a.example');
  const tooRecent = await event(TENANT_A, 'a.example');
  const pending = await event(TENANT_A, 'a.example');
  const otherTenant = await event(TENANT_B, 'a.example');
  await markDead(inWindow1, ago(60));
  await markDead(inWindow2, ago(30));
  await markDead(tooOld, ago(120));
  await markDead(tooRecent, ago(5));
  await markDead(otherTenant, ago(45));
  await db.updateTable('events').set({ failures_in_run: 6, attempt_count: 6 }).execute();

  expect(await store.replayDead(TENANT_A, ago(90), ago(10), 10_000)).toBe(2);
  const rows = await db.selectFrom('events').selectAll().execute();
  const byId = new Map(rows.map((r) => [r.event_id, r]));
  for (const id of [inWindow1, inWindow2]) {
    const r = byId.get(id)!;
    expect(r).toMatchObject({
      status: 'pending',
      failures_in_run: 0,
      attempt_count: 6,
      dead_at: null,
      locked_until: null,
    });
    expect(r.next_attempt_at!.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
  }
  for (const id of [tooOld, tooRecent, otherTenant]) expect(byId.get(id)!.status).toBe('dead');
  expect(byId.get(pending)!.status).toBe('pending');
  // A replayed event is claimable at once.
  const claimed = await store.claimDue(100, 60_000, { left: new Map(), perHost: 100 });
  expect(claimed.map((c) => c.eventId).sort()).toEqual(expect.arrayContaining([inWindow1, inWindow2].sort()));
  // Nothing left to replay there; without until, up to now; and at most `max`.
  expect(await store.replayDead(TENANT_A, ago(90), ago(10), 10_000)).toBe(0);
  expect(await store.replayDead(TENANT_A, ago(200), null, 1)).toBe(1);
  expect(
    (await db.selectFrom('events').select('status').where('event_id', '=', tooOld).executeTakeFirstOrThrow()).status,
  ).toBe('pending');
  expect(await store.replayDead(TENANT_B, ago(200), null, 10_000)).toBe(1);
});

/* Receivable filter ---------------------------------------------------------------------------------- */

it("lists only the events of a charge, and takes the charge from a receivable callback's payload", async () => {
  const charge = randomUUID();
  const another = randomUUID();
  expect(
    receivableIdOf({ event_type: 'receivable.paid', payload: { accounts_receivable_id: charge.toUpperCase() } }),
  ).toBe(charge);
  expect(receivableIdOf({ event_type: 'receivable.paid', payload: { accounts_receivable_id: 'x; drop' } })).toBeNull();
  expect(receivableIdOf({ event_type: 'receivable.paid', payload: { accounts_receivable_id: 42 } })).toBeNull();
  expect(receivableIdOf({ event_type: 'booklet.sent', payload: { accounts_receivable_id: charge } })).toBeNull();
  const registered = await event(TENANT_A, 'a.example', charge);
  const paid = await event(TENANT_A, 'a.example', charge);
  await event(TENANT_A, 'a.example', another);
  await event(TENANT_A, 'a.example', null);
  const list = await store.list(TENANT_A, undefined, 10, undefined, charge);
  expect(list.map((e) => e.eventId).sort()).toEqual([registered, paid].sort());
  // Another tenant asking for the same charge sees nothing; a status filter still applies.
  expect(await store.list(TENANT_B, undefined, 10, undefined, charge)).toEqual([]);
  expect(await store.list(TENANT_A, 'dead', 10, undefined, charge)).toEqual([]);
  expect(await store.list(TENANT_A, undefined, 10)).toHaveLength(4);
});
