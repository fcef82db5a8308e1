import { createPartitionsAhead } from '@payments/db';
import { sql, type Kysely, type Migration } from 'kysely';
import { STATE_HISTORY } from '../partitioned-tables';
import { SCHEMA } from './schema-name';

export const stateHistoryByMonth: Migration = {
  async up(db: Kysely<unknown>) {
    // The history becomes a table partitioned by month on `at`, under its old name and with its old
    // columns and defaults, so the previous release reads and writes it unchanged. Its rows stay where
    // they are: the old table is attached as the partition of everything before now, and is dropped
    // whole once its newest row is past the retention. The rename waits for writers of the history and
    // holds them until the commit (a lock timeout fails the migration, to be run again).
    await sql`lock table state_history in access exclusive mode`.execute(db);
    await sql`alter table state_history rename to state_history_legacy`.execute(db);
    await sql`alter index state_history_pkey rename to state_history_legacy_pkey`.execute(db);
    await sql`alter index state_history_receivable_idx rename to state_history_legacy_receivable_idx`.execute(db);
    // The previous release looks this index up by name and builds it concurrently when missing, which
    // a partitioned table refuses: it stays a plain index of that name, on the old rows.
    await sql`create index if not exists state_history_rejected_at_idx on state_history_legacy (at)
      where to_state = 'rejected'`.execute(db);
    // No primary key: a unique index would have to hold `at` too, and attaching the old rows would
    // build it under the lock; ids come from the same sequence and only order entries of one instant.
    // No foreign key to receivables either: a history entry is written beside its charge's change.
    await sql`create table state_history (
      id bigint not null default nextval('state_history_id_seq'),
      receivable_id uuid not null,
      tenant_id uuid not null,
      from_state text,
      to_state text not null,
      reason text not null,
      at timestamptz not null default now()
    ) partition by range (at)`.execute(db);
    // Owned by the old table, the sequence would go when its partition is dropped.
    await sql`alter sequence state_history_id_seq owned by state_history.id`.execute(db);
    // Created on the parent before the old rows are attached: the old table's indexes of the same
    // shape become its partitions' (nothing is built), new partitions get their own.
    await sql`create index state_history_receivable_idx on state_history (receivable_id, at)`.execute(db);
    await sql`create index state_history_rejected_idx on state_history (at) where to_state = 'rejected'`.execute(db);
    await sql`alter table state_history attach partition state_history_legacy
      for values from (minvalue) to (${sql.lit((await conversionBound(db)).toISOString())})`.execute(db);
    await createPartitionsAhead(db, SCHEMA, STATE_HISTORY);
  },
};

/**
 * Where the old history rows' partition ends: after every row committed before the lock (the
 * database's clock now, or a later time some writer's clock put on a row), so the attach finds
 * all of them inside it. The newest rows by id are read through the key, not the whole table.
 */
async function conversionBound(db: Kysely<unknown>): Promise<Date> {
  const { rows } = await sql<{ bound: Date }>`
    select greatest(clock_timestamp(), (select max(at) from (select at from state_history_legacy order by id desc limit 10000) newest))
      + interval '1 millisecond' as bound`.execute(db);
  const bound = rows[0]?.bound;
  if (!bound) throw new Error('no clock reading for the history conversion');
  return bound;
}
