import { sql, type Kysely, type Migration } from 'kysely';

export const paymentsNeedingRefund: Migration = {
  async up(db: Kysely<unknown>) {
    // Money the provider took for a charge it had cancelled or rejected: the charge keeps its state,
    // the payment is kept here for an operator's refund decision.
    await db.schema
      .createTable('payments_needing_refund')
      .addColumn('event_id', 'text', (c) => c.primaryKey())
      .addColumn('receivable_id', 'uuid', (c) => c.notNull().references('receivables.id'))
      .addColumn('tenant_id', 'uuid', (c) => c.notNull())
      .addColumn('provider_account_id', 'uuid')
      .addColumn('provider_charge_id', 'text', (c) => c.notNull())
      .addColumn('charge_state', 'text', (c) => c.notNull().check(sql`charge_state in ('cancelled', 'rejected')`))
      .addColumn('paid_at', 'timestamptz', (c) => c.notNull())
      .addColumn('amount_paid_cents', 'bigint', (c) => c.notNull())
      .addColumn('fee_cents', 'bigint', (c) => c.notNull())
      .addColumn('payment_type', 'text', (c) => c.notNull())
      .addColumn('recorded_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createIndex('payments_needing_refund_tenant_idx')
      .on('payments_needing_refund')
      .columns(['tenant_id', 'recorded_at'])
      .execute();
  },
};
