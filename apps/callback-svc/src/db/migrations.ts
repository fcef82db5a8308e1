import { createPartitionsAhead, type OnlineIndex } from '@payments/db';
import { sql, type Kysely, type Migration, type RawBuilder } from 'kysely';
import { DEFAULT_RETENTION_DAYS, logTables, tuneLogPartitions } from './log-tables';

export const SCHEMA = 'callbacks';

export const migrations: Record<string, Migration> = {
  '0001_events_and_attempts': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('events')
        .addColumn('event_id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'uuid', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('target_host', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'dead')`))
        .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('failures_in_run', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'timestamptz')
        .addColumn('locked_until', 'timestamptz')
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`date_trunc('milliseconds', now())`)) // ms, like the JS Date in list cursors
        .addColumn('delivered_at', 'timestamptz')
        .addColumn('dead_at', 'timestamptz')
        .execute();
      // The delivery queue: only pending events, by due time.
      await sql`create index events_due_idx on events (next_attempt_at) where status = 'pending'`.execute(db);
      // Tenant listings, newest first, optionally by status.
      await db.schema
        .createIndex('events_tenant_created_idx')
        .on('events')
        .columns(['tenant_id', 'created_at desc', 'event_id desc'])
        .execute();
      await db.schema
        .createIndex('events_tenant_status_created_idx')
        .on('events')
        .columns(['tenant_id', 'status', 'created_at desc', 'event_id desc'])
        .execute();
      await db.schema
        .createTable('attempts')
        .addColumn('id', 'bigserial', (c) => c.primaryKey())
        .addColumn('event_id', 'text', (c) => c.notNull().references('events.event_id'))
        .addColumn('tenant_id', 'uuid', (c) => c.notNull())
        .addColumn('attempted_at', 'timestamptz', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('error', 'text')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('response_excerpt', 'text')
        .execute();
      await db.schema.createIndex('attempts_event_idx').on('attempts').columns(['event_id', 'attempted_at']).execute();
    },
  },
  '0002_event_trace_context': {
    async up(db: Kysely<unknown>) {
      // The trace context of the callback request the event came from: each delivery attempt is traced
      // as its child, however long after (and on whichever worker) it runs. Null for older events.
      await db.schema.alterTable('events').addColumn('trace_context', 'json').execute();
    },
  },
  '0003_claim_due_events': {
    async up(db: Kysely<unknown>) {
      // The claim, as a function so that it can fix its plan. Under a burst the table's statistics lag
      // (they say almost nothing is pending), and the planner then reads every due row through a bitmap
      // scan and sorts them, which grows with the backlog (about 10 ms per claim at 5,000 waiting). The
      // due index read in order stops after the rows it takes, at any backlog.
      await sql`
        create function claim_due_events(max_count int, lease interval, busy_hosts text[], busy_room int[], per_host int)
        returns setof events
        language sql
        set enable_bitmapscan = off
        set enable_seqscan = off
        set search_path from current
        as $$
          with candidates as (
            select event_id, target_host, next_attempt_at from events
            where status = 'pending' and next_attempt_at <= now()
              and not (target_host = any(array(select h from unnest(busy_hosts, busy_room) as b(h, r) where r <= 0)))
            order by next_attempt_at
            limit max_count
            for update skip locked
          ), ranked as (
            select c.event_id, coalesce(b.r, per_host) as room,
              row_number() over (partition by c.target_host order by c.next_attempt_at) as place
            from candidates c left join unnest(busy_hosts, busy_room) as b(h, r) on b.h = c.target_host
          )
          update events set next_attempt_at = now() + lease, locked_until = now() + lease
          from ranked
          where events.event_id = ranked.event_id and ranked.place <= ranked.room
          returning events.*
        $$`.execute(db);
    },
  },
  '0004_claim_due_events_per_host': {
    async up(db: Kysely<unknown>) {
      // 0003 took the oldest max_count due rows and only then applied each host's room, so a host with a
      // little room and an old backlog filled the candidates: the claim returned its room's worth and
      // nothing for other hosts with room, whose due events waited while the backlog lasted.
      //
      // Now the claim first makes the same cheap read as before: the oldest max_count due rows by the due
      // index, which stops after the rows it takes at any backlog. When none of them goes over its host's
      // room, or the queue had fewer, they are the answer, as before. Otherwise (a full window with a host
      // over its room) it claims host by host on the per-host index below: the hosts with pending rows,
      // one index probe each (a loose index scan); the max_count of them whose oldest row is due soonest;
      // the oldest due rows of each, up to its room and no later than the latest of those heads (the
      // max_count-th claimable row is no later); of these, the oldest max_count, locked one by one in that
      // order (a row another claim holds is skipped and the next taken). One probe per host with pending
      // work plus the rows read; never the whole backlog.
      //
      // The plan holds with statistics that lag (a burst after a quiet time, or after a few hosts): the
      // per-host read compares (target_host, next_attempt_at) as a row and orders by both, which only the
      // per-host index serves, and the lock looks rows up by id one at a time. Written plainly, the
      // planner walked the due index filtering by host, once per host: 1 s and 4 s per claim at 1,000
      // hosts. 20,000 due rows, a claim of 1,000 (of 50), median ms, most of it updating the rows taken:
      //   3 hosts:                                    15-20 (1.3-1.7) before, 17-21 (1.6-2.0) after
      //   1,000 hosts:                                17-19 (1.2-1.7) before, 20-27 (1.7-2.0) after
      //   oldest host with room 1, 3 hosts:           1 event claimed before; 19-30 (1.7-2.3)
      //   oldest host with room 1, 1,000 hosts:       1 event claimed before; 31-47 (7-11)
      await sql`create index events_host_due_idx on events (target_host, next_attempt_at) where status = 'pending'`.execute(
        db,
      );
      await claimDueEventsFunction(sql`next_attempt_at = now() + lease, locked_until = now() + lease`).execute(db);
    },
  },
  '0005_lease_fencing': {
    async up(db: Kysely<unknown>) {
      // Fencing: each claim writes a new lease_token, and an attempt's outcome is written
      // only while the row still carries the token of the claim that made it. A worker whose lease ran
      // out (stalled, cut off from Postgres) and was claimed again cannot overwrite the later outcome.
      await db.schema.alterTable('events').addColumn('lease_token', 'uuid').execute();
      await claimDueEventsFunction(
        sql`next_attempt_at = now() + lease, locked_until = now() + lease, lease_token = gen_random_uuid()`,
      ).execute(db);
    },
  },
  '0006_worker_leases': {
    async up(db: Kysely<unknown>) {
      // Claims held by a worker that died are taken over within seconds (15 s): each worker
      // keeps one row alive (alive_until) by a heartbeat, and its claimed events name it. Renewing the
      // lease of every held event instead would rewrite up to CALLBACK_MAX_HELD rows (and their index
      // entries) every few seconds; this is one row per worker. When a worker's row lapses, any worker
      // gives its events back to the queue (reap). The row-level lease (locked_until) stays as a bound
      // on how long a claim lasts if everything else fails.
      await db.schema
        .createTable('workers')
        .addColumn('worker_id', 'uuid', (c) => c.primaryKey())
        .addColumn('alive_until', 'timestamptz', (c) => c.notNull())
        .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
      await db.schema.alterTable('events').addColumn('worker_id', 'uuid').execute();
      // Only claimed rows are in it: a reap reads the dead worker's rows and nothing else.
      await sql`create index events_worker_idx on events (worker_id) where worker_id is not null`.execute(db);
      // A new overload naming the claiming worker. The five-argument function stays for instances of the
      // previous version during a rolling upgrade (their claims carry no worker and end with their lease).
      await claimDueEventsFunction(
        sql`next_attempt_at = now() + lease, locked_until = now() + lease, lease_token = gen_random_uuid(), worker_id = worker`,
        sql`, worker uuid`,
      ).execute(db);
    },
  },
  '0007_delivery_stats': {
    async up(db: Kysely<unknown>) {
      // The charge a receivable's callback is about (its payload's accounts_receivable_id), filled on
      // ingest, for GET /api/v1/callbacks?receivable_id=. Null for other events and for rows older
      // than this migration (their charges' callbacks are not found by the filter).
      await db.schema.alterTable('events').addColumn('receivable_id', 'uuid').execute();
      // Its index, and those the rollup and the replay read on events and attempts, are built
      // concurrently after the migrations (onlineIndexes below): a build in this transaction would
      // hold writes to these large tables (ingest, claims, attempts) for its whole length.
      // Deliveries per minute, tenant and receiving host (GET /admin/v1/stats/deliveries and
      // /admin/v1/delivery-health), rebuilt from attempts and events by the rollup
      // (domain/delivery-stats.ts), never written by the delivery path. Attempt durations are a
      // histogram over fixed bounds (DURATION_BOUNDS_MS there), so any number of minutes adds up
      // (bucket by bucket) and p50/p99 of a quarter hour or a day are read from the sum; a
      // percentile of percentiles could not be. Sparse, as two arrays of the same length (bucket
      // index, count) holding only the non-empty buckets: a minute's attempts mostly fall in a few
      // of the 47 buckets, and a sum is one unnest and group by, with no row per bucket to upsert.
      // duration_max_ms bounds the open last bucket. last_failure_at/last_error: the minute's last
      // failed attempt (error and the start of the receiver's answer, 200 characters at most).
      await db.schema
        .createTable('delivery_minutes')
        .addColumn('minute', 'timestamptz', (c) => c.notNull())
        .addColumn('tenant_id', 'uuid', (c) => c.notNull())
        .addColumn('target_host', 'text', (c) => c.notNull())
        .addColumn('delivered', 'integer', (c) => c.notNull())
        .addColumn('failed', 'integer', (c) => c.notNull())
        .addColumn('dead', 'integer', (c) => c.notNull())
        .addColumn('duration_buckets', sql`smallint[]`, (c) => c.notNull())
        .addColumn('duration_counts', sql`integer[]`, (c) => c.notNull())
        .addColumn('duration_max_ms', 'integer')
        .addColumn('last_failure_at', 'timestamptz')
        .addColumn('last_error', 'text')
        .addPrimaryKeyConstraint('delivery_minutes_pk', ['minute', 'tenant_id', 'target_host'])
        .execute();
      await db.schema
        .createIndex('delivery_minutes_tenant_idx')
        .on('delivery_minutes')
        .columns(['tenant_id', 'minute'])
        .execute();
      // The rollup's watermark: up to where the aggregates are final. A single row; the rollup
      // itself runs under a transaction-scoped advisory lock, so N instances never roll up at once.
      await db.schema
        .createTable('delivery_rollup')
        .addColumn('id', 'boolean', (c) =>
          c
            .primaryKey()
            .defaultTo(true)
            .check(sql`id`),
        )
        .addColumn('rolled_until', 'timestamptz', (c) => c.notNull())
        .execute();
    },
  },
  '0008_claim_due_events_per_tenant': {
    async up(db: Kysely<unknown>) {
      // A claim also keeps to each tenant's room (its share of the worker's hold), the way it keeps to
      // each host's: one tenant's old backlog, on any number of hosts, cannot fill the claims while
      // other tenants' due events wait. A new overload with three more parameters; the six-argument
      // function stays for instances of the previous version during a rolling upgrade.
      await claimDueEventsPerTenantFunction().execute(db);
    },
  },
  '0009_queue_apart_from_log': {
    async up(db: Kysely<unknown>) {
      await splitQueueFromLog(db);
    },
  },
  '0010_delivery_latency': {
    async up(db: Kysely<unknown>) {
      // The end-to-end latency of each minute's deliveries (event created to delivered), a sparse
      // histogram over LATENCY_BOUNDS_MS as the attempt durations are over theirs. Defaults, so the
      // previous release's rollup, which names its columns, still inserts; its minutes read as
      // having no latency until the next rollup rebuilds them. Adding columns with a constant
      // default rewrites nothing: the table is not locked for its length.
      await sql`alter table delivery_minutes
        add column latency_buckets smallint[] not null default '{}',
        add column latency_counts integer[] not null default '{}',
        add column latency_max_ms bigint`.execute(db);
    },
  },
};

/**
 * Indexes on the large tables, built with CREATE INDEX CONCURRENTLY in the background after the
 * migrations (libs/db ensureOnlineIndexes). None since 0009: those of 0007 (by receivable, by dead_at,
 * attempts by attempted_at) were on the old table, now the log's first partition, where 0009 attaches
 * them to the log's own; the queue is small and indexed in its migration. A partitioned table takes
 * no concurrent build.
 */
export const onlineIndexes: OnlineIndex[] = [];

/**
 * claim_due_events as 0004 wrote it (see there for how it claims); `setOnClaim` is what a claim writes
 * on the rows it takes, which 0005 extends with a fencing token and 0006 with the claiming worker
 * (an extra parameter, `moreParameters`).
 */
function claimDueEventsFunction(setOnClaim: RawBuilder<unknown>, moreParameters: RawBuilder<unknown> = sql``) {
  return sql`
        create or replace function claim_due_events(max_count int, lease interval, busy_hosts text[], busy_room int[], per_host int${moreParameters})
        returns setof events
        language sql
        set enable_bitmapscan = off
        set enable_seqscan = off
        set search_path from current
        as $$
          with recursive room as (
            select h as target_host, r as room from unnest(busy_hosts, busy_room) as b(h, r)
          ), oldest as (
            select event_id, target_host, next_attempt_at from events
            where status = 'pending' and next_attempt_at <= now()
              and not (target_host = any(array(select target_host from room where room <= 0)))
            order by next_attempt_at
            limit max_count
            for update skip locked
          ), ranked as (
            select o.event_id, coalesce(r.room, per_host) as room,
              row_number() over (partition by o.target_host order by o.next_attempt_at) as place
            from oldest o left join room r on r.target_host = o.target_host
          ), by_host_needed as (
            select (select count(*) from oldest) = max_count and exists (select 1 from ranked where place > room) as yes
          ), hosts(target_host, head) as (
            (select target_host, next_attempt_at from events where status = 'pending'
              order by target_host, next_attempt_at limit 1)
            union all
            select n.target_host, n.next_attempt_at from hosts h cross join lateral (
              select target_host, next_attempt_at from events
              where status = 'pending' and target_host > h.target_host
              order by target_host, next_attempt_at limit 1) n
          ), due_hosts as (
            select h.target_host, h.head, coalesce(r.room, per_host) as room
            from hosts h left join room r on r.target_host = h.target_host
            where h.head <= now() and coalesce(r.room, per_host) > 0
            order by h.head
            limit max_count
          ), bound as (
            select case when count(*) < max_count then now() else max(head) end as until from due_hosts
          ), host_candidates as (
            select c.event_id, c.next_attempt_at from due_hosts d cross join bound cross join lateral (
              select event_id, next_attempt_at from events
              where status = 'pending'
                and (target_host, next_attempt_at) >= (d.target_host, '-infinity'::timestamptz)
                and (target_host, next_attempt_at) <= (d.target_host, bound.until)
              order by target_host, next_attempt_at
              limit least(d.room, max_count)) c
          ), by_host as (
            select e.event_id
            from (select event_id, next_attempt_at from host_candidates order by next_attempt_at) c
            cross join lateral (
              select event_id from events
              where events.event_id = c.event_id and status = 'pending' and next_attempt_at <= now()
              for update skip locked
            ) e
            order by c.next_attempt_at
            limit max_count
          ), claimed as (
            select event_id from ranked where place <= room and not (select yes from by_host_needed)
            union all
            select event_id from by_host where (select yes from by_host_needed)
          )
          update events set ${setOnClaim}
          from claimed
          where events.event_id = claimed.event_id
          returning events.*
        $$`;
}

/**
 * claim_due_events as 0008 writes it: 0006's claim (see 0004 for how it claims) with each tenant's
 * room beside each host's. Tenants without room are skipped in the cheap read by due time; when a
 * tenant or a host goes over its room there, the claim goes host by host as before, where a tenant
 * whose event heads a host's queue brings no more such hosts than its room, and then keeps, of each
 * tenant's candidates, the oldest its room allows. So a tenant's backlog on many hosts does not take
 * the places of other tenants' hosts. A claim may still take fewer than max_count while more is due
 * (a host's candidates were mostly a full tenant's, behind its head); the next one takes them.
 */
function claimDueEventsPerTenantFunction() {
  return sql`
        create or replace function claim_due_events(max_count int, lease interval, busy_hosts text[], busy_room int[], per_host int,
          worker uuid, busy_tenants uuid[], busy_tenant_room int[], per_tenant int)
        returns setof events
        language sql
        set enable_bitmapscan = off
        set enable_seqscan = off
        set search_path from current
        as $$
          with recursive room as (
            select h as target_host, r as room from unnest(busy_hosts, busy_room) as b(h, r)
          ), tenant_room as (
            select t as tenant_id, r as room from unnest(busy_tenants, busy_tenant_room) as b(t, r)
          ), oldest as (
            select event_id, tenant_id, target_host, next_attempt_at from events
            where status = 'pending' and next_attempt_at <= now()
              and not (target_host = any(array(select target_host from room where room <= 0)))
              and not (tenant_id = any(array(select tenant_id from tenant_room where room <= 0)))
            order by next_attempt_at
            limit max_count
            for update skip locked
          ), ranked as (
            select o.event_id,
              coalesce(r.room, per_host) as room,
              row_number() over (partition by o.target_host order by o.next_attempt_at) as place,
              coalesce(t.room, per_tenant) as tenant_room,
              row_number() over (partition by o.tenant_id order by o.next_attempt_at) as tenant_place
            from oldest o
              left join room r on r.target_host = o.target_host
              left join tenant_room t on t.tenant_id = o.tenant_id
          ), by_host_needed as (
            select (select count(*) from oldest) = max_count
              and exists (select 1 from ranked where place > room or tenant_place > tenant_room) as yes
          ), hosts(target_host, head, tenant_id) as (
            (select target_host, next_attempt_at, tenant_id from events where status = 'pending'
              order by target_host, next_attempt_at limit 1)
            union all
            select n.target_host, n.next_attempt_at, n.tenant_id from hosts h cross join lateral (
              select target_host, next_attempt_at, tenant_id from events
              where status = 'pending' and target_host > h.target_host
              order by target_host, next_attempt_at limit 1) n
          ), due_hosts as (
            select target_host, head, room from (
              select h.target_host, h.head, coalesce(r.room, per_host) as room, coalesce(t.room, per_tenant) as tenant_room,
                row_number() over (partition by h.tenant_id order by h.head) as tenant_place
              from hosts h
                left join room r on r.target_host = h.target_host
                left join tenant_room t on t.tenant_id = h.tenant_id
              where h.head <= now() and coalesce(r.room, per_host) > 0) x
            where tenant_place <= tenant_room
            order by head
            limit max_count
          ), bound as (
            select case when count(*) < max_count then now() else max(head) end as until from due_hosts
          ), host_candidates as (
            select c.event_id, c.tenant_id, c.next_attempt_at from due_hosts d cross join bound cross join lateral (
              select event_id, tenant_id, next_attempt_at from events
              where status = 'pending'
                and (target_host, next_attempt_at) >= (d.target_host, '-infinity'::timestamptz)
                and (target_host, next_attempt_at) <= (d.target_host, bound.until)
              order by target_host, next_attempt_at
              limit least(d.room, max_count)) c
          ), tenant_candidates as (
            select event_id, next_attempt_at from (
              select h.event_id, h.next_attempt_at, coalesce(t.room, per_tenant) as room,
                row_number() over (partition by h.tenant_id order by h.next_attempt_at) as place
              from host_candidates h left join tenant_room t on t.tenant_id = h.tenant_id) c
            where place <= room
          ), by_host as (
            select e.event_id
            from (select event_id, next_attempt_at from tenant_candidates order by next_attempt_at) c
            cross join lateral (
              select event_id from events
              where events.event_id = c.event_id and status = 'pending' and next_attempt_at <= now()
              for update skip locked
            ) e
            order by c.next_attempt_at
            limit max_count
          ), claimed as (
            select event_id from ranked
            where place <= room and tenant_place <= tenant_room and not (select yes from by_host_needed)
            union all
            select event_id from by_host where (select yes from by_host_needed)
          )
          update events set next_attempt_at = now() + lease, locked_until = now() + lease,
            lease_token = gen_random_uuid(), worker_id = worker
          from claimed
          where events.event_id = claimed.event_id
          returning events.*
        $$`;
}

/**
 * 0009: the delivery queue apart from the delivery log (docs/architecture.md, "Callback queue and
 * log"). `events` stays the queue under its name, unpartitioned, with the columns it always had:
 * the previous release inserts into it with `on conflict (event_id)`, which no partitioned table can
 * serve (its unique keys must hold the partition key), and claims from it through claim_due_events.
 * It keeps what is owed: pending events, and dead ones until retried or replayed. A delivered event
 * leaves it (trigger events_leave_queue), so its hot indexes span the backlog, not the history.
 * `event_log` is the log, partitioned by day on created_at: every event with its body, its status
 * mirrored when it changes. The old table, history and all, becomes its first partition, from
 * MINVALUE to the conversion; `attempts` is converted the same way, by attempted_at. What the
 * previous release writes still lands where it must: the triggers log every row entering the queue
 * (events_enter_log) and name the host of every attempt written without it (attempts_fill_host).
 * `event_keys` maps an event id to its created_at (producers mint ids without a time), so a lookup
 * by id reads one partition, and a republished event is still known once delivered.
 */
async function splitQueueFromLog(db: Kysely<unknown>): Promise<void> {
  // In the order the previous release's writers lock them (events, then attempts): no deadlock.
  await sql`lock table events, attempts in access exclusive mode`.execute(db);
  // Taken with the locks held: every event was written by a transaction that ended before it (its
  // created_at is that transaction's start). Attempts carry the worker's clock, which may run ahead.
  const { rows } = await sql<{ events_until: string; attempts_until: string }>`
    select to_char(x.t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as events_until,
           to_char(greatest(x.t, (select max(attempted_at) from attempts) + interval '1 millisecond') at time zone 'UTC',
             'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as attempts_until
    from (select date_trunc('milliseconds', clock_timestamp()) + interval '1 millisecond' as t) x`.execute(db);
  const { events_until: eventsUntil, attempts_until: attemptsUntil } = rows[0];

  await sql`alter table events rename to events_legacy`.execute(db);
  await sql`alter table attempts rename to attempts_legacy`.execute(db);
  // Rows of the queue leave it when delivered; their attempts stay in the log.
  await sql`alter table attempts_legacy drop constraint if exists attempts_event_id_fkey`.execute(db);
  await sql`alter table attempts_legacy add column target_host text`.execute(db);

  // The log: the old table's columns, so that it attaches as a partition. A column added later to
  // the queue is added to event_log too (events_enter_log copies the row whole).
  await sql`create table event_log (like events_legacy including defaults including constraints) partition by range (created_at)`.execute(
    db,
  );
  // A valid check proves the bound, so the attach reads nothing more.
  await sql`alter table events_legacy add constraint events_legacy_until check (created_at < ${sql.lit(eventsUntil)}::timestamptz)`.execute(
    db,
  );
  await sql`alter table event_log attach partition events_legacy for values from (minvalue) to (${sql.lit(eventsUntil)})`.execute(
    db,
  );
  // The previous release builds these by name after it migrates (its online indexes) and takes any
  // valid one of that name; on the old rows they stay under it (here they were only missing if its
  // build never finished, or the database is new and they are empty).
  await sql`create index if not exists events_tenant_receivable_idx on events_legacy
    (tenant_id, receivable_id, created_at desc, event_id desc) where receivable_id is not null`.execute(db);
  await sql`create index if not exists events_tenant_dead_idx on events_legacy (tenant_id, dead_at) where status = 'dead'`.execute(
    db,
  );
  await sql`create index if not exists events_dead_at_idx on events_legacy (dead_at) where status = 'dead'`.execute(db);
  await sql`create index if not exists attempts_attempted_at_idx on attempts_legacy (attempted_at)`.execute(db);
  // Tenant listings, newest first (and a lookup by tenant, created_at and id); the old table has both.
  await sql`create index event_log_tenant_created_idx on event_log (tenant_id, created_at desc, event_id desc)`.execute(
    db,
  );
  await sql`create index event_log_tenant_receivable_idx on event_log (tenant_id, receivable_id, created_at desc, event_id desc)
    where receivable_id is not null`.execute(db);
  // Until the old rows are past the retention, lookups by id without a key look in their partition.
  await sql`create function log_converted_at() returns timestamptz language sql immutable
    as $$ select ${sql.lit(eventsUntil)}::timestamptz $$`.execute(db);

  await sql`create table attempts (like attempts_legacy including defaults) partition by range (attempted_at)`.execute(
    db,
  );
  await sql`alter table attempts_legacy add constraint attempts_legacy_until check (attempted_at < ${sql.lit(attemptsUntil)}::timestamptz)`.execute(
    db,
  );
  await sql`alter table attempts attach partition attempts_legacy for values from (minvalue) to (${sql.lit(attemptsUntil)})`.execute(
    db,
  );
  // The sequence outlives the old table's partition.
  await sql`alter sequence attempts_id_seq owned by attempts.id`.execute(db);
  await sql`create index attempts_event_at_idx on attempts (event_id, attempted_at)`.execute(db);
  await sql`create index attempts_at_idx on attempts (attempted_at)`.execute(db);
  for (const table of logTables(DEFAULT_RETENTION_DAYS)) await createPartitionsAhead(db, SCHEMA, table);
  await tuneLogPartitions(db);

  // The queue: the same columns, what is owed, and the indexes the claim, the reap, the replay and
  // the delivery statistics read (those of 0001 to 0008, and by tenant and status for listings).
  await sql`create table events (like events_legacy including defaults including constraints)`.execute(db);
  await sql`alter table events drop constraint events_legacy_until`.execute(db);
  await sql`alter table events add constraint events_queue_pkey primary key (event_id)`.execute(db);
  await sql`insert into events select * from events_legacy where status = 'pending'`.execute(db);
  await sql`insert into events select * from events_legacy where status = 'dead'`.execute(db);
  await sql`create index events_queue_due_idx on events (next_attempt_at) where status = 'pending'`.execute(db);
  await sql`create index events_queue_host_due_idx on events (target_host, next_attempt_at) where status = 'pending'`.execute(
    db,
  );
  await sql`create index events_queue_worker_idx on events (worker_id) where worker_id is not null`.execute(db);
  await sql`create index events_queue_tenant_status_idx on events (tenant_id, status, created_at desc, event_id desc)`.execute(
    db,
  );
  await sql`create index events_queue_tenant_dead_idx on events (tenant_id, dead_at) where status = 'dead'`.execute(db);
  await sql`create index events_queue_dead_at_idx on events (dead_at) where status = 'dead'`.execute(db);
  // Small and hot: every row is inserted, claimed, updated and deleted within minutes. Vacuumed
  // after 1 % dead rows (the default 20 % lets a backlog's churn bloat it), without cost pauses.
  await sql`alter table events set (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
    autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000, autovacuum_vacuum_cost_delay = 0)`.execute(
    db,
  );

  // An event's day, by id: written once, read by lookups, deleted in batches past the retention.
  await sql`create table event_keys (event_id text primary key, created_at timestamptz not null)`.execute(db);
  await sql`create index event_keys_created_idx on event_keys using brin (created_at)`.execute(db);
  await sql`alter table event_keys set (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05)`.execute(
    db,
  );

  await sql`
    create function events_enter_log() returns trigger language plpgsql set search_path from current as $$
    begin
      -- Known already (delivered, dead or pending): a republished event is stored once.
      -- Events from before the conversion have no key: their partition is probed (pruned to it,
      -- nothing once it is dropped).
      if not exists (select 1 from event_log where event_id = new.event_id and created_at < log_converted_at()) then
        insert into event_keys (event_id, created_at) values (new.event_id, new.created_at) on conflict do nothing;
        if found then
          insert into event_log select new.*;
          return new;
        end if;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger events_enter_log before insert on events for each row execute function events_enter_log()`.execute(
    db,
  );
  await sql`
    create function events_leave_queue() returns trigger language plpgsql set search_path from current as $$
    begin
      update event_log set status = new.status, attempt_count = new.attempt_count, failures_in_run = new.failures_in_run,
        next_attempt_at = new.next_attempt_at, delivered_at = new.delivered_at, dead_at = new.dead_at,
        locked_until = new.locked_until, lease_token = new.lease_token, worker_id = new.worker_id
      where tenant_id = new.tenant_id and created_at = new.created_at and event_id = new.event_id;
      if new.status = 'delivered' then
        delete from events where event_id = new.event_id;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger events_leave_queue after update on events for each row
    when (old.status is distinct from new.status) execute function events_leave_queue()`.execute(db);
  await sql`
    create function attempts_fill_host() returns trigger language plpgsql set search_path from current as $$
    declare
      at timestamptz;
    begin
      select target_host into new.target_host from events where event_id = new.event_id;
      if new.target_host is null then
        select created_at into at from event_keys where event_id = new.event_id;
        if at is null then
          select target_host into new.target_host from event_log where event_id = new.event_id and created_at < log_converted_at();
        else
          select target_host into new.target_host from event_log
          where tenant_id = new.tenant_id and created_at = at and event_id = new.event_id;
        end if;
      end if;
      return new;
    end $$`.execute(db);
  await sql`create trigger attempts_fill_host before insert on attempts for each row
    when (new.target_host is null) execute function attempts_fill_host()`.execute(db);

  // claim_due_events returned rows of the old table: each overload again, for the queue (the
  // previous release calls the six- and nine-argument ones).
  await sql`drop function claim_due_events(int, interval, text[], int[], int)`.execute(db);
  await sql`drop function claim_due_events(int, interval, text[], int[], int, uuid)`.execute(db);
  await sql`drop function claim_due_events(int, interval, text[], int[], int, uuid, uuid[], int[], int)`.execute(db);
  await claimDueEventsFunction(
    sql`next_attempt_at = now() + lease, locked_until = now() + lease, lease_token = gen_random_uuid()`,
  ).execute(db);
  await claimDueEventsFunction(
    sql`next_attempt_at = now() + lease, locked_until = now() + lease, lease_token = gen_random_uuid(), worker_id = worker`,
    sql`, worker uuid`,
  ).execute(db);
  await claimDueEventsPerTenantFunction().execute(db);
}
