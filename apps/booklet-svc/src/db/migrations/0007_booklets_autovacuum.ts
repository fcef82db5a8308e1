import { sql, type Kysely, type Migration } from 'kysely';

export const bookletsAutovacuum: Migration = {
  // The outbox is a queue (rows inserted, published, deleted within seconds): vacuumed after a
  // fixed number of dead rows, not a fraction of a table that is nearly always empty. The booklets
  // are updated once each (queued, then ready or failed): room left on each page keeps that
  // update on the page (HOT). Storage parameters take only a SHARE UPDATE EXCLUSIVE lock.
  async up(db: Kysely<unknown>) {
    await sql`alter table outbox set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
        autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 1000)`.execute(db);
    await sql`alter table booklets set (fillfactor = 85, autovacuum_vacuum_scale_factor = 0.05,
        autovacuum_analyze_scale_factor = 0.05)`.execute(db);
  },
};
