import { sql, type Kysely, type Migration } from 'kysely';

export const deliveryStats: Migration = {
  async up(db: Kysely<unknown>) {
    // The charge a receivable's callback is about (its payload's accounts_receivable_id), filled on
    // ingest, for GET /api/v1/callbacks?receivable_id=. Null for other events and for rows older
    // than this migration (their charges' callbacks are not found by the filter).
    await db.schema.alterTable('events').addColumn('receivable_id', 'uuid').execute();
    // Its index, and those the rollup and the replay read on events and attempts, are built
    // concurrently after the migrations (the schema's onlineIndexes): a build in this transaction would
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
};
