import { sql, type Kysely, type Migration } from 'kysely';
import { createPartitionsAhead } from '@payments/db';
import { claimDueEventsFunction, claimDueEventsPerTenantFunction } from './claim-due-events';
import { DEFAULT_RETENTION_DAYS, logTables, tuneLogPartitions } from '../log-tables';
import { SCHEMA } from './schema-name';

export const queueApartFromLog: Migration = {
  async up(db: Kysely<unknown>) {
    await splitQueueFromLog(db);
  },
};

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
