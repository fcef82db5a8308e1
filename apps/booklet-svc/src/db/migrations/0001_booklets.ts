import { sql, type Kysely, type Migration } from 'kysely';

export const booklets: Migration = {
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
};
