import { sql, type Kysely, type Migration } from 'kysely';

export const autovacuumPerTable: Migration = {
  async up(db: Kysely<unknown>) {
    // Storage settings take a lock that lets reads and writes go on, and rewrite nothing.
    // receivables: every state change, registration and attempt updates a row; vacuumed after 2 % of
    // it changed rather than 20 % (at tens of millions of rows, 20 % is weeks of dead rows), and room
    // left in each page for an update to stay on it.
    await sql`alter table receivables set (autovacuum_vacuum_scale_factor = 0.02,
      autovacuum_analyze_scale_factor = 0.02, fillfactor = 90)`.execute(db);
    // bank_notices: a queue as well as a record (each notice is updated when applied).
    await sql`alter table bank_notices set (autovacuum_vacuum_scale_factor = 0.02,
      autovacuum_analyze_scale_factor = 0.02)`.execute(db);
    // provider_events: inserted only; vacuumed after 2 % new rows so they are frozen and all-visible
    // early (the dedupe lookups stay index-only) rather than in one long vacuum much later.
    await sql`alter table provider_events set (autovacuum_vacuum_insert_scale_factor = 0.02)`.execute(db);
    // The counters' change rows are appended and deleted by the fold every few seconds; the counts
    // themselves are a few rows updated as often: vacuumed by row count, not by share of the table.
    await sql`alter table state_count_changes set (autovacuum_vacuum_scale_factor = 0,
      autovacuum_vacuum_threshold = 10000, autovacuum_vacuum_insert_scale_factor = 0,
      autovacuum_vacuum_insert_threshold = 10000)`.execute(db);
    await sql`alter table state_counts set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000)`.execute(
      db,
    );
    // The history's partitions are insert-only; Postgres's default insert-triggered vacuum (after
    // 20 % new rows) suits them, and a partitioned table takes no such settings of its own.
  },
};
