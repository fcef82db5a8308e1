import { sql, type Kysely, type Migration } from 'kysely';

export const hotTablesAutovacuum: Migration = {
  // Idempotency keys turn over a day's requests a day (one per ERP request),
  // each inserted, updated once with its answer and deleted by the sweep: vacuumed after 1% of
  // dead rows rather than 20%, faster, and with room on each page for the answer's update (HOT).
  // Rate-limit buckets are a few rows updated by every admission: vacuumed after a fixed number
  // of dead rows, with half of each page free. Storage parameters take only a SHARE UPDATE
  // EXCLUSIVE lock: the previous release goes on reading and writing meanwhile.
  async up(db: Kysely<unknown>) {
    await sql`alter table idempotency_keys set (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.01,
          autovacuum_vacuum_threshold = 10000, autovacuum_analyze_scale_factor = 0.02,
          autovacuum_vacuum_cost_limit = 1000, toast.autovacuum_vacuum_scale_factor = 0.01)`.execute(db);
    await sql`alter table rate_limit_buckets set (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
          autovacuum_vacuum_threshold = 1000, autovacuum_analyze_scale_factor = 0,
          autovacuum_analyze_threshold = 1000)`.execute(db);
  },
};
