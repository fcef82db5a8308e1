import { sql, type Kysely, type Migration } from 'kysely';

export const receivables: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('receivables')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('tenant_id', 'uuid', (c) => c.notNull())
      .addColumn('account_receivable_id', 'uuid', (c) => c.notNull())
      .addColumn('client_id', 'uuid', (c) => c.notNull())
      .addColumn('payment_slip_id', 'uuid', (c) => c.notNull())
      .addColumn('payment_method', 'smallint', (c) => c.notNull().check(sql`payment_method in (1, 3)`))
      .addColumn('url_callback', 'text', (c) => c.notNull())
      .addColumn('emission_date', 'date', (c) => c.notNull())
      .addColumn('due_date', 'date', (c) => c.notNull())
      .addColumn('amount_cents', 'bigint', (c) => c.notNull().check(sql`amount_cents > 0`))
      .addColumn('discount_type', 'text', (c) => c.notNull())
      .addColumn('discount_cents', 'bigint')
      .addColumn('discount_until', 'date')
      .addColumn('fine_bp', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('interest_cents_per_day', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('items', 'jsonb', (c) => c.notNull())
      .addColumn('payer', 'jsonb', (c) => c.notNull())
      .addColumn('client_name', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) =>
        c.notNull().check(sql`state in ('pending', 'approved', 'rejected', 'cancelled')`),
      )
      .addColumn('registration_status', 'text', (c) => c.notNull())
      .addColumn('provider_charge_id', 'text')
      .addColumn('our_number', 'text')
      .addColumn('barcode', 'text')
      .addColumn('typeable_line', 'text')
      .addColumn('pix_copy_and_paste', 'text')
      .addColumn('qrcode_image_url', 'text')
      .addColumn('pdf_url', 'text')
      .addColumn('rejection_code', 'text')
      .addColumn('rejection_message', 'text')
      .addColumn('payment_date', 'timestamptz')
      .addColumn('amount_paid_cents', 'bigint')
      .addColumn('fee_cents', 'bigint')
      .addColumn('payment_type', 'text', (c) => c.notNull().defaultTo('undefined'))
      .addColumn('cancel_requested_at', 'timestamptz')
      .addColumn('cancellation_requests', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addUniqueConstraint('receivables_tenant_erp_id_uq', ['tenant_id', 'account_receivable_id'])
      .execute();
    // Search: by tenant and emission date (and state), paged on (emission_date, account_receivable_id).
    await db.schema
      .createIndex('receivables_search_idx')
      .on('receivables')
      .columns(['tenant_id', 'emission_date', 'account_receivable_id'])
      .execute();
    await db.schema
      .createIndex('receivables_search_state_idx')
      .on('receivables')
      .columns(['tenant_id', 'state', 'emission_date', 'account_receivable_id'])
      .execute();
    // Booklets: every installment of a payment slip id.
    await db.schema
      .createIndex('receivables_slip_idx')
      .on('receivables')
      .columns(['tenant_id', 'payment_slip_id', 'due_date'])
      .execute();
    await sql`create unique index receivables_provider_charge_uq on receivables (provider_charge_id) where provider_charge_id is not null`.execute(
      db,
    );
    await db.schema
      .createTable('state_history')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('receivable_id', 'uuid', (c) => c.notNull().references('receivables.id'))
      .addColumn('tenant_id', 'uuid', (c) => c.notNull())
      .addColumn('from_state', 'text')
      .addColumn('to_state', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createIndex('state_history_receivable_idx')
      .on('state_history')
      .columns(['receivable_id', 'at'])
      .execute();
    await db.schema
      .createTable('provider_events')
      .addColumn('event_id', 'text', (c) => c.primaryKey())
      .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
};
