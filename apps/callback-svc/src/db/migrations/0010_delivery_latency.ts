import { sql, type Kysely, type Migration } from 'kysely';

export const deliveryLatency: Migration = {
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
};
