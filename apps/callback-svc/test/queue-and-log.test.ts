import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import {
  createDatabase,
  createPartitionsAhead,
  createTestDatabase,
  listPartitions,
  maintainPartitions,
  migrateToLatest,
} from '@payments/db';
import { logTables } from '../src/db/log-tables';
import { LogUpkeep } from '../src/db/log-upkeep';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { CallbacksDatabase } from '../src/db/schema';
import type { ClaimedEvent } from '../src/domain/callback-event';
import { EventStore, type AttemptResult } from '../src/domain/event-store';
import type { AttemptOutcome } from '../src/domain/http-delivery';

// The delivery queue apart from the delivery log (migration 0009), against a real Postgres: what
// leaves the queue, what the retention drops and what it keeps, lookups pruned to one partition, and
// the previous release's statements (copied from it below) against the new schema.

const LEASE = 60_000;
const ROOM = { left: new Map<string, number>(), perHost: 1_000 };
const DAY_MS = 86_400_000;

const ok: AttemptOutcome = {
  ok: true,
  statusCode: 200,
  error: null,
  durationMs: 5,
  responseExcerpt: null,
  retryAfterMs: null,
  refused: false,
};
const failed: AttemptOutcome = { ...ok, ok: false, statusCode: 500, error: 'HTTP 500' };

function result(event: ClaimedEvent, outcome: AttemptOutcome, retryAt: Date | null): AttemptResult {
  return { event, attemptedAt: new Date(), outcome, retryAt };
}

const newId = () => `evt_${randomUUID().replace(/-/g, '')}`;

interface Db {
  test: { url: string; drop: () => Promise<void> };
  db: Kysely<CallbacksDatabase>;
  store: EventStore;
}

async function migrated(upTo?: string): Promise<Db> {
  const test = await createTestDatabase();
  const db = createDatabase<CallbacksDatabase>({ url: test.url, schema: SCHEMA, poolSize: 4 });
  const chosen = Object.fromEntries(Object.entries(migrations).filter(([name]) => upTo === undefined || name <= upTo));
  await migrateToLatest(db, SCHEMA, chosen);
  return { test, db, store: new EventStore(db) };
}

async function close(t: Db | undefined): Promise<void> {
  await t?.db.destroy();
  await t?.test.drop();
}

/** Rows of the queue for these ids, independent of the store. */
async function queued(db: Kysely<CallbacksDatabase>, ids: string[]): Promise<string[]> {
  const { rows } = await sql<{ event_id: string }>`
    select event_id from events where event_id = any(${ids}::text[]) order by event_id`.execute(db);
  return rows.map((r) => r.event_id);
}

async function loggedStatus(db: Kysely<CallbacksDatabase>, id: string): Promise<string | undefined> {
  const { rows } = await sql<{ status: string }>`select status from event_log where event_id = ${id}`.execute(db);
  return rows[0]?.status;
}

async function ingest(store: EventStore, tenantId: string, ids: string[]): Promise<void> {
  await store.ingest(
    ids.map((eventId) => ({
      eventId,
      tenantId,
      eventType: 'booklet.sent',
      url: 'http://erp.test/cb',
      body: '{"a":1}',
    })),
    new Set(),
    LEASE,
  );
}

type Fate = 'delivered' | 'retried' | 'dead';

/** Claims what is due (at least these events) and records each one's fate: delivered, failed and retried in an hour, or dead. */
async function attempt(store: EventStore, fates: Record<string, Fate>): Promise<void> {
  const ids = Object.keys(fates);
  const claimed = (await store.claimDue(1_000, LEASE, ROOM)).filter((e) => ids.includes(e.eventId));
  expect(claimed.map((e) => e.eventId).sort()).toEqual([...ids].sort());
  await store.recordAttempts(
    claimed.map((e) => {
      const fate = fates[e.eventId];
      return result(
        e,
        fate === 'delivered' ? ok : failed,
        fate === 'retried' ? new Date(Date.now() + 3_600_000) : null,
      );
    }),
  );
}

describe('the queue and the log', () => {
  let t: Db;
  beforeAll(async () => {
    t = await migrated();
  });
  afterAll(() => close(t));

  it('a delivered event leaves the queue; the log keeps it, its attempts and its detail', async () => {
    const tenant = randomUUID();
    const [a, b] = [newId(), newId()];
    await ingest(t.store, tenant, [a, b]);
    expect(await queued(t.db, [a, b])).toEqual([a, b].sort());
    await attempt(t.store, { [a]: 'delivered', [b]: 'retried' });
    expect(await queued(t.db, [a, b])).toEqual([b]);
    expect(await loggedStatus(t.db, a)).toBe('delivered');
    const view = await t.store.find(tenant, a);
    expect(view).toMatchObject({ status: 'delivered', attemptCount: 1, body: '{"a":1}' });
    expect(view?.attempts?.map((x) => x.statusCode)).toEqual([200]);
    const { rows } = await sql<{ target_host: string }>`select target_host from attempts where event_id = ${a}`.execute(
      t.db,
    );
    expect(rows).toEqual([{ target_host: 'erp.test' }]);
    // Listed from the log, the pending one with its queue row (an attempt so far).
    const listed = await t.store.list(tenant, undefined, 10);
    expect(listed.map((v) => [v.eventId, v.status, v.attemptCount]).sort()).toEqual(
      [
        [a, 'delivered', 1],
        [b, 'pending', 1],
      ].sort(),
    );
    expect((await t.store.list(tenant, 'pending', 10)).map((v) => v.eventId)).toEqual([b]);
    expect((await t.store.list(tenant, 'delivered', 10)).map((v) => v.eventId)).toEqual([a]);
  });

  it('a republished event is stored once, also after it was delivered', async () => {
    const tenant = randomUUID();
    const a = newId();
    await ingest(t.store, tenant, [a]);
    await attempt(t.store, { [a]: 'delivered' });
    await ingest(t.store, tenant, [a]);
    expect(await queued(t.db, [a])).toEqual([]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from event_log where event_id = ${a}`.execute(
      t.db,
    );
    expect(rows[0].n).toBe(1);
  });

  it('a lookup by id reads one partition of the log', async () => {
    const tenant = randomUUID();
    const a = newId();
    await ingest(t.store, tenant, [a]);
    await attempt(t.store, { [a]: 'delivered' });
    const partitions = await listPartitions(t.db as unknown as Kysely<unknown>, SCHEMA, 'event_log');
    expect(partitions.length).toBeGreaterThan(2);
    // The statements EventStore.find issues for a logged event: its key, then the day it names.
    const key = await t.db
      .selectFrom('event_keys')
      .select('created_at')
      .where('event_id', '=', a)
      .executeTakeFirstOrThrow();
    const { rows } = await sql<{ 'QUERY PLAN': string }>`
      explain select * from event_log where tenant_id = ${tenant} and event_id = ${a} and created_at = ${key.created_at}`.execute(
      t.db,
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect([...new Set(plan.match(/\b(event_log_p\d+|events_legacy)\b/g))]).toEqual([
      `event_log_p${key.created_at.toISOString().slice(0, 10).replaceAll('-', '')}`,
    ]);
  });

  it('delivered callbacks past the retention go with their partition; owed ones are still delivered', async () => {
    const tenant = randomUUID();
    const [done, pending, dead] = [newId(), newId(), newId()];
    await ingest(t.store, tenant, [done, pending, dead]);
    await attempt(t.store, { [done]: 'delivered', [pending]: 'retried', [dead]: 'dead' });
    // 91 days on, everything written today is past the retention: its partitions are dropped...
    const later = new Date(Date.now() + 91 * DAY_MS);
    const { dropped } = await maintainPartitions(t.db as unknown as Kysely<unknown>, SCHEMA, logTables(90), later);
    expect(dropped.length).toBeGreaterThanOrEqual(2);
    // ...and today's days are created again, as if today were that day (Postgres's clock does not move).
    for (const table of logTables(90)) await createPartitionsAhead(t.db as unknown as Kysely<unknown>, SCHEMA, table);
    expect(await t.store.find(tenant, done)).toBeUndefined();
    expect(await loggedStatus(t.db, pending)).toBeUndefined();
    // The owed ones are whole in the queue: shown, retried, delivered.
    expect(await t.store.find(tenant, pending)).toMatchObject({ status: 'pending', body: '{"a":1}' });
    expect(await t.store.find(tenant, dead)).toMatchObject({ status: 'dead' });
    expect(await t.store.retryDead(tenant, dead)).toBe(true);
    await sql`update events set next_attempt_at = now() where event_id = ${pending}`.execute(t.db);
    await attempt(t.store, { [pending]: 'delivered', [dead]: 'delivered' });
    expect(await queued(t.db, [pending, dead])).toEqual([]);
    const { rows } = await sql<{ event_id: string }>`
      select event_id from attempts where event_id = any(${[pending, dead]}::text[]) and status_code = 200`.execute(
      t.db,
    );
    expect(rows.map((r) => r.event_id).sort()).toEqual([pending, dead].sort());
  });

  it('keys of events past the retention are deleted, newer ones kept', async () => {
    const [old, fresh] = [newId(), newId()];
    await sql`insert into event_keys (event_id, created_at) values (${old}, now() - interval '92 days'), (${fresh}, now() - interval '90 days')`.execute(
      t.db,
    );
    expect(await new LogUpkeep(t.db).pruneKeys(90)).toBeGreaterThanOrEqual(1);
    const { rows } = await sql<{ event_id: string }>`
      select event_id from event_keys where event_id = any(${[old, fresh]}::text[])`.execute(t.db);
    expect(rows.map((r) => r.event_id)).toEqual([fresh]);
  });

  it('the log partitions carry their settings, the queue its autovacuum', async () => {
    await new LogUpkeep(t.db).tunePartitions();
    const { rows } = await sql<{ name: string; options: string[] | null }>`
      select c.relname as name, c.reloptions as options from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${SCHEMA} and c.relkind = 'r' and (c.relname like 'event_log_p%' or c.relname = 'events')`.execute(
      t.db,
    );
    expect(rows.length).toBeGreaterThan(2);
    for (const r of rows) {
      if (r.name === 'events') expect(r.options).toContain('autovacuum_vacuum_scale_factor=0.01');
      else expect(r.options).toContain('fillfactor=90');
    }
  });
});

/** The previous release's intake, claim and outcome, as it wrote them (apps/callback-svc at v0.28.0). */
const previousRelease = {
  async ingest(db: Kysely<CallbacksDatabase>, eventId: string, tenantId: string): Promise<void> {
    await sql`
      insert into events (event_id, tenant_id, event_type, url, target_host, body, status, next_attempt_at, locked_until, lease_token, worker_id, trace_context, receivable_id)
      select e.event_id, e.tenant_id, e.event_type, e.url, e.target_host, e.body, 'pending',
        case when e.claimed then now() + interval '60 seconds' else now() end, case when e.claimed then now() + interval '60 seconds' end,
        case when e.claimed then gen_random_uuid() end, case when e.claimed then ${null}::uuid end, e.trace_context, e.receivable_id
      from unnest(${[eventId]}::text[], ${[tenantId]}::uuid[], ${['booklet.sent']}::text[],
        ${['http://erp.test/cb']}::text[], ${['erp.test']}::text[], ${['{"n":1}']}::text[],
        ${[false]}::bool[], ${[null]}::json[], ${[null]}::uuid[])
        as e(event_id, tenant_id, event_type, url, target_host, body, claimed, trace_context, receivable_id)
      on conflict (event_id) do nothing
      returning event_id, tenant_id, url, target_host, body, failures_in_run, locked_until, lease_token, trace_context`.execute(
      db,
    );
  },
  async claim(
    db: Kysely<CallbacksDatabase>,
  ): Promise<Array<{ event_id: string; tenant_id: string; lease_token: string }>> {
    const { rows } = await sql<{ event_id: string; tenant_id: string; lease_token: string }>`
      select * from claim_due_events(${100}, make_interval(secs => 60), ${[]}::text[], ${[]}::int[], ${100}, ${null}::uuid,
        ${[]}::uuid[], ${[]}::int[], ${100})`.execute(db);
    return rows;
  },
  async delivered(
    db: Kysely<CallbacksDatabase>,
    e: { event_id: string; tenant_id: string; lease_token: string },
  ): Promise<void> {
    await db.transaction().execute(async (trx) => {
      await sql`
        update events set status = v.status, attempt_count = events.attempt_count + 1, failures_in_run = v.failures,
          next_attempt_at = v.next_at, locked_until = null, lease_token = null, worker_id = null, delivered_at = v.delivered_at, dead_at = v.dead_at
        from unnest(${[e.event_id]}::text[], ${[e.lease_token]}::uuid[], ${['delivered']}::text[], ${[0]}::int[],
          ${[null]}::timestamptz[], ${[new Date()]}::timestamptz[], ${[null]}::timestamptz[])
          as v(event_id, lease_token, status, failures, next_at, delivered_at, dead_at)
        where events.event_id = v.event_id and events.lease_token = v.lease_token and events.status = 'pending'
        returning events.event_id, v.lease_token`.execute(trx);
      await sql`
        insert into attempts (event_id, tenant_id, attempted_at, status_code, error, duration_ms, response_excerpt)
        select * from unnest(${[e.event_id]}::text[], ${[e.tenant_id]}::uuid[], ${[new Date()]}::timestamptz[],
          ${[200]}::int[], ${[null]}::text[], ${[3]}::int[], ${[null]}::text[])`.execute(trx);
    });
  },
};

describe('the previous release against the new schema', () => {
  let t: Db;
  beforeAll(async () => {
    t = await migrated();
  });
  afterAll(() => close(t));

  it('its insert into events, with only its columns, is claimed, delivered and logged', async () => {
    const tenant = randomUUID();
    const a = newId();
    await previousRelease.ingest(t.db, a, tenant);
    const claimed = (await previousRelease.claim(t.db)).filter((e) => e.event_id === a);
    expect(claimed).toHaveLength(1);
    await previousRelease.delivered(t.db, claimed[0]);
    expect(await queued(t.db, [a])).toEqual([]);
    expect(await t.store.find(tenant, a)).toMatchObject({ status: 'delivered', attemptCount: 1, body: '{"n":1}' });
    // Its attempt names no host: the trigger gives it the event's, for the delivery statistics.
    const { rows } = await sql<{ target_host: string }>`select target_host from attempts where event_id = ${a}`.execute(
      t.db,
    );
    expect(rows).toEqual([{ target_host: 'erp.test' }]);
  });

  it('finds the indexes it builds after migrating, valid, under their names', async () => {
    // Its online indexes (apps/callback-svc/src/db/migrations.ts at v0.28.0), checked as its libs/db
    // checks them: a plain index of that name, valid; it would build a missing one, and fail on a
    // partitioned table.
    const names = [
      'events_tenant_receivable_idx',
      'events_tenant_dead_idx',
      'events_dead_at_idx',
      'attempts_attempted_at_idx',
    ];
    const { rows } = await sql<{ name: string; kind: string; valid: boolean }>`
      select c.relname as name, c.relkind as kind, i.indisvalid as valid from pg_class c
      join pg_namespace n on n.oid = c.relnamespace join pg_index i on i.indexrelid = c.oid
      where n.nspname = ${SCHEMA} and c.relname = any(${names}::text[]) order by 1`.execute(t.db);
    expect(rows).toEqual([...names].sort().map((name) => ({ name, kind: 'i', valid: true })));
  });

  it('an event it stores is delivered by this release, and one this release stores by it', async () => {
    const tenant = randomUUID();
    const [mine, theirs] = [newId(), newId()];
    await previousRelease.ingest(t.db, theirs, tenant);
    await attempt(t.store, { [theirs]: 'delivered' });
    await ingest(t.store, tenant, [mine]);
    const claimed = (await previousRelease.claim(t.db)).filter((e) => e.event_id === mine);
    await previousRelease.delivered(t.db, claimed[0]);
    expect(await queued(t.db, [mine, theirs])).toEqual([]);
    expect([await loggedStatus(t.db, mine), await loggedStatus(t.db, theirs)]).toEqual(['delivered', 'delivered']);
  });
});

describe('converting a schema in place', () => {
  let t: Db;
  afterEach(() => close(t));

  it('keeps every old event: owed ones queued and delivered, delivered ones found by id in the old rows', async () => {
    t = await migrated('0008_claim_due_events_per_tenant');
    const tenant = randomUUID();
    const [done, pending, dead] = [newId(), newId(), newId()];
    for (const id of [done, pending, dead]) await previousRelease.ingest(t.db, id, tenant);
    await sql`update events set status = 'delivered', delivered_at = now(), attempt_count = 1, next_attempt_at = null where event_id = ${done}`.execute(
      t.db,
    );
    await sql`update events set status = 'dead', dead_at = now(), attempt_count = 5, next_attempt_at = null where event_id = ${dead}`.execute(
      t.db,
    );
    await sql`insert into attempts (event_id, tenant_id, attempted_at, status_code, duration_ms) values (${done}, ${tenant}, now(), 200, 4)`.execute(
      t.db,
    );
    await migrateToLatest(t.db, SCHEMA, migrations);

    const parts = await listPartitions(t.db as unknown as Kysely<unknown>, SCHEMA, 'event_log');
    expect(parts[0]).toMatchObject({ name: 'events_legacy', from: undefined });
    expect(await queued(t.db, [done, pending, dead])).toEqual([pending, dead].sort());
    expect(await t.store.find(tenant, done)).toMatchObject({ status: 'delivered', attempts: [{ statusCode: 200 }] });
    // Republished after the conversion: known by its old row, not stored again.
    await ingest(t.store, tenant, [done]);
    expect(await queued(t.db, [done])).toEqual([]);
    expect(await t.store.retryDead(tenant, dead)).toBe(true);
    await attempt(t.store, { [pending]: 'delivered', [dead]: 'delivered' });
    expect([await loggedStatus(t.db, pending), await loggedStatus(t.db, dead)]).toEqual(['delivered', 'delivered']);
    // The retention drops the old rows' partition, in time, like any day's.
    const { dropped } = await maintainPartitions(
      t.db as unknown as Kysely<unknown>,
      SCHEMA,
      logTables(90),
      new Date(Date.now() + 91 * DAY_MS),
    );
    expect(dropped).toContain(`${SCHEMA}.events_legacy`);
    expect(dropped).toContain(`${SCHEMA}.attempts_legacy`);
  });
});
