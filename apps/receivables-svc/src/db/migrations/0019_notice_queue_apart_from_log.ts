import { createPartitionsAhead } from '@payments/db';
import { sql, type Kysely, type Migration } from 'kysely';
import { BANK_NOTICE_LOG } from '../partitioned-tables';
import { SCHEMA } from './schema-name';

export const noticeQueueApartFromLog: Migration = {
  async up(db: Kysely<unknown>) {
    await splitNoticeQueueFromLog(db);
  },
};

/**
 * 0019: the bank's notices as a queue apart from their log (docs/architecture.md, "Receivables over
 * the years"), as the callbacks' 0009 did. `bank_notices` stays the queue under its name, unpartitioned,
 * with the columns and the unique dedup index it always had: the previous release inserts into it with
 * `on conflict (tenant_id, account_key, dedup_key)`, which no partitioned table can serve, and applies
 * notices from it. It keeps what is owed: notices not applied yet. An applied notice leaves it (trigger
 * bank_notices_leave_queue), so it stays the size of the backlog.
 * `bank_notice_log` is the log, partitioned by month on received_at: every notice, its outcome mirrored
 * as it is tried. The old table, history and all, becomes its first partition, from MINVALUE to the
 * conversion. `bank_notice_keys` keeps reconciliation's dedup keys once their notice has left the queue,
 * so that sweeping the same window again still adds nothing. What the previous release writes lands
 * where it must: the triggers do the logging, for both releases. A column added later to the queue is
 * added to the log too (bank_notices_enter_log copies the row whole).
 */
async function splitNoticeQueueFromLog(db: Kysely<unknown>): Promise<void> {
  await sql`lock table bank_notices in access exclusive mode`.execute(db);
  const convertedAt = await conversionBound(db);

  await sql`alter table bank_notices rename to bank_notices_legacy`.execute(db);

  // Without the old table's checks: every row enters the log through the queue, which keeps them,
  // and the old kind check is NOT VALID (0013), which a parent's valid one would have to scan for.
  await sql`create table bank_notice_log (like bank_notices_legacy including defaults)
    partition by range (received_at)`.execute(db);
  // A valid check proves the bound, so the attach reads no rows: its own scan is the one read of the
  // old table under the lock.
  await sql`alter table bank_notices_legacy add constraint bank_notices_legacy_until
    check (received_at < ${sql.lit(convertedAt)}::timestamptz)`.execute(db);
  await sql`alter table bank_notice_log attach partition bank_notices_legacy
    for values from (minvalue) to (${sql.lit(convertedAt)})`.execute(db);
  // A notice's outcome is mirrored by id within its month. Made ON ONLY after the attach, so that the
  // old rows' index is not built under this lock (it was most of it): the partitions created from now
  // on get theirs at once, the old partition's primary key serves it meanwhile, and `npm run migrate`
  // builds its own concurrently and attaches it (online-indexes.ts), which makes this one valid.
  await sql`create index bank_notice_log_id_idx on only bank_notice_log (id)`.execute(db);
  await createPartitionsAhead(db, SCHEMA, BANK_NOTICE_LOG);
  // Until the old rows are past the retention, a dedup key without a row in bank_notice_keys is
  // looked up among them.
  await sql`create function notices_converted_at() returns timestamptz language sql immutable
    as $$ select ${sql.lit(convertedAt)}::timestamptz $$`.execute(db);

  // The queue: the same columns, what is owed, and the indexes the worker, the rearm and the
  // previous release's `on conflict` read.
  await sql`create table bank_notices (like bank_notices_legacy including defaults including constraints)`.execute(db);
  await sql`alter table bank_notices drop constraint bank_notices_legacy_until`.execute(db);
  await sql`alter table bank_notices add constraint bank_notices_queue_pkey primary key (id)`.execute(db);
  // Owned by the old table, the id sequence would go when its partition is dropped.
  await sql`alter sequence bank_notices_id_seq owned by bank_notices.id`.execute(db);
  await sql`create index bank_notices_queue_due_idx on bank_notices (next_attempt_at) where applied_at is null`.execute(
    db,
  );
  await sql`create unique index bank_notices_queue_dedup_idx on bank_notices (tenant_id, account_key, dedup_key)
    where dedup_key is not null`.execute(db);
  // What the old table still owes, queued again before the triggers exist: their log rows are the old
  // ones. Read through the old due index, which holds just those rows; it serves nothing afterwards.
  // The old unique dedup index stays: the triggers look up old keys in it.
  await sql`insert into bank_notices select * from bank_notices_legacy where applied_at is null`.execute(db);
  await sql`drop index bank_notices_due_idx`.execute(db);
  // Small and hot: every row is inserted, tried and deleted, most within seconds.
  await sql`alter table bank_notices set (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
    autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000, autovacuum_vacuum_cost_delay = 0)`.execute(
    db,
  );

  // Reconciliation's keys: written once, read by every sweep's store, deleted in batches past the
  // retention (db/notice-retention.ts).
  await sql`create table bank_notice_keys (
    tenant_id uuid not null,
    account_key text not null,
    dedup_key text not null,
    received_at timestamptz not null,
    constraint bank_notice_keys_pkey primary key (tenant_id, account_key, dedup_key)
  )`.execute(db);
  await sql`create index bank_notice_keys_received_idx on bank_notice_keys using brin (received_at)`.execute(db);
  await sql`alter table bank_notice_keys set (autovacuum_vacuum_insert_scale_factor = 0.02)`.execute(db);

  await sql`
    create function bank_notices_enter_log() returns trigger language plpgsql set search_path from current as $$
    begin
      if new.dedup_key is not null then
        -- Found before (in the queue, applied, or among the old rows): stored once. Two stores of
        -- one key at once queue on its key row, and the second stores nothing.
        if exists (select 1 from bank_notice_log where tenant_id = new.tenant_id and account_key = new.account_key
            and dedup_key = new.dedup_key and received_at < notices_converted_at()) then
          return null;
        end if;
        insert into bank_notice_keys (tenant_id, account_key, dedup_key, received_at)
        values (new.tenant_id, new.account_key, new.dedup_key, new.received_at) on conflict do nothing;
        if not found then
          return null;
        end if;
      end if;
      insert into bank_notice_log select new.*;
      if new.applied_at is not null then
        return null;
      end if;
      return new;
    end $$`.execute(db);
  await sql`create trigger bank_notices_enter_log before insert on bank_notices
    for each row execute function bank_notices_enter_log()`.execute(db);
  await sql`
    create function bank_notices_leave_queue() returns trigger language plpgsql set search_path from current as $$
    begin
      update bank_notice_log set attempts = new.attempts, next_attempt_at = new.next_attempt_at,
        applied_at = new.applied_at, outcome = new.outcome, last_error = new.last_error
      where received_at = new.received_at and id = new.id;
      if new.applied_at is not null then
        delete from bank_notices where id = new.id;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger bank_notices_leave_queue after update on bank_notices
    for each row execute function bank_notices_leave_queue()`.execute(db);
}

/**
 * Where the old rows' partition ends: after every row committed before the lock (the database's
 * clock now, or a later time written on a row), as an ISO instant in milliseconds, as partition
 * maintenance reads bounds. The newest rows by id are read through the key, not the whole table.
 */
async function conversionBound(db: Kysely<unknown>): Promise<string> {
  const { rows } = await sql<{ bound: string }>`
    select to_char((date_trunc('milliseconds', greatest(clock_timestamp(),
        (select max(received_at) from (select received_at from bank_notices order by id desc limit 10000) newest)))
      + interval '1 millisecond') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as bound`.execute(db);
  const bound = rows[0]?.bound;
  if (bound === undefined) throw new Error('no clock reading for the notices conversion');
  return bound;
}
