import { sql, type Kysely, type Migration } from 'kysely';
import { outboxMigration, outboxRetryMigration, outboxTraceContextMigration } from '@payments/outbox';

export const SCHEMA = 'booklets';

export const migrations: Record<string, Migration> = {
  '0001_booklets': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('booklets')
        .addColumn('id', 'uuid', (c) => c.primaryKey())
        .addColumn('tenant_id', 'uuid', (c) => c.notNull())
        .addColumn('payment_slip_id', 'uuid', (c) => c.notNull())
        .addColumn('url_callback', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('queued', 'ready', 'failed')`))
        .addColumn('installment_count', 'integer')
        .addColumn('page_count', 'integer')
        .addColumn('error', 'text')
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn('finished_at', 'timestamptz')
        .execute();
      await db.schema
        .createIndex('booklets_tenant_slip_idx')
        .on('booklets')
        .columns(['tenant_id', 'payment_slip_id'])
        .execute();
      await db.schema
        .createTable('booklet_files')
        .addColumn('booklet_id', 'uuid', (c) => c.primaryKey().references('booklets.id'))
        .addColumn('pdf', 'bytea', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
    },
  },
  '0002_outbox': outboxMigration,
  '0003_outbox_trace_context': outboxTraceContextMigration,
  '0004_outbox_retry': outboxRetryMigration,
  '0005_payment_slip_id_as_sent': {
    async up(db: Kysely<unknown>) {
      // The slip id as the ERP spelled it on its charges, for answers and callbacks; the uuid
      // key still matches any case. Booklets from before keep their stored (lower-case) spelling.
      await db.schema.alterTable('booklets').addColumn('payment_slip_id_as_sent', 'text').execute();
      await sql`update booklets set payment_slip_id_as_sent = payment_slip_id::text`.execute(db);
      await db.schema
        .alterTable('booklets')
        .alterColumn('payment_slip_id_as_sent', (c) => c.setNotNull())
        .execute();
    },
  },
};
