import { sql, type Kysely, type Migration } from 'kysely';
import { createPartitionsAhead } from '@payments/db';
import { outboxMigration, outboxRetryMigration, outboxTraceContextMigration } from '@payments/outbox';
import { BOOKLET_PDFS, bookletPdfPartitions } from './booklet-files';

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
  '0006_booklet_pdfs': {
    // The PDFs by day, dropped with their partition past the retention; the previous release's
    // booklet_files stays as it is (db/booklet-files.ts says why). No foreign key to booklets: dropping
    // a partition would then lock booklets too.
    async up(db: Kysely<unknown>) {
      await sql`create table ${sql.table(BOOKLET_PDFS)} (
        booklet_id uuid not null,
        pdf bytea not null,
        created_at timestamptz not null default now(),
        primary key (booklet_id, created_at)
      ) partition by range (created_at)`.execute(db);
      // pdfkit compresses its streams: Postgres trying again would spend CPU for nothing.
      await sql`alter table ${sql.table(BOOKLET_PDFS)} alter column pdf set storage external`.execute(db);
      // The retention plays no part in creating partitions.
      await createPartitionsAhead(db, SCHEMA, bookletPdfPartitions(1));
    },
  },
  '0007_booklets_autovacuum': {
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
  },
};
