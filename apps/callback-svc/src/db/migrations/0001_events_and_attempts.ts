import { sql, type Kysely, type Migration } from 'kysely';

export const eventsAndAttempts: Migration = {
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
};
