import { sql, type Kysely, type Migration } from 'kysely';

export const chargesAndNotifications: Migration = {
  async up(db: Kysely<unknown>) {
    // our_number: 11 digits in the barcode's free field, so the sequence stops there rather than wrap.
    await sql`create sequence our_number_seq as bigint minvalue 1 maxvalue 99999999999 no cycle`.execute(db);
    await db.schema
      .createTable('charges')
      .addColumn('charge_id', 'uuid', (c) => c.primaryKey())
      .addColumn('our_number', 'text', (c) => c.notNull().unique())
      .addColumn('idempotency_key', 'text', (c) => c.notNull().unique())
      .addColumn('request_fingerprint', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('hybrid_slip', 'pix')`))
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('registered', 'paid', 'cancelled')`))
      .addColumn('amount_cents', 'bigint', (c) => c.notNull().check(sql`amount_cents > 0`))
      .addColumn('issue_date', 'text', (c) => c.notNull().check(sql`issue_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'`))
      .addColumn('due_date', 'text', (c) => c.notNull().check(sql`due_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'`))
      .addColumn('payer', 'jsonb', (c) => c.notNull())
      .addColumn('discount', 'jsonb')
      .addColumn('fine_percent_bp', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('interest_per_day_cents', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('instructions', 'jsonb', (c) => c.notNull())
      .addColumn('description_lines', 'jsonb', (c) => c.notNull())
      .addColumn('reference', 'text')
      .addColumn('barcode', 'text')
      .addColumn('typeable_line', 'text')
      .addColumn('pix_copy_and_paste', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('cancelled_at', 'timestamptz')
      .addColumn('paid_at', 'timestamptz')
      .addColumn('amount_paid_cents', 'bigint')
      .addColumn('fee_cents', 'bigint')
      .addColumn('payment_method', 'text', (c) => c.check(sql`payment_method in ('boleto', 'pix', 'manual')`))
      .execute();
    await db.schema
      .createTable('notifications')
      .addColumn('event_id', 'uuid', (c) => c.primaryKey())
      .addColumn('charge_id', 'uuid', (c) => c.notNull().references('charges.charge_id'))
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'failed')`))
      .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'timestamptz')
      .addColumn('locked_until', 'timestamptz')
      .addColumn('last_status_code', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('delivered_at', 'timestamptz')
      .execute();
    // The delivery queue: pending notifications by due time.
    await sql`create index notifications_due_idx on notifications (next_attempt_at) where status = 'pending'`.execute(
      db,
    );
    await db.schema.createIndex('notifications_charge_idx').on('notifications').column('charge_id').execute();
  },
};
