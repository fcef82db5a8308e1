import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The Inter dialect's tables (migration 0100_inter_dialect): its API clients (one per
 * client_id, each its own account with its own nossoNumero sequence), their OAuth tokens, their charges
 * and the payment webhooks to their registered URLs.
 */
export const interDialectMigration: Migration = {
  async up(db: Kysely<unknown>) {
    // Each client is an account of its own: 7 digits in the barcode's free field.
    await sql`create sequence inter_account_seq as bigint minvalue 1 maxvalue 9999999 no cycle`.execute(db);
    await db.schema
      .createTable('inter_clients')
      .addColumn('client_id', 'text', (c) => c.primaryKey())
      .addColumn('secret_sha256', 'text')
      .addColumn('account', 'text', (c) => c.notNull().unique())
      .addColumn('next_our_number', 'bigint', (c) =>
        c
          .notNull()
          .defaultTo(1)
          .check(sql`next_our_number between 1 and 99999999999`),
      )
      .addColumn('holder', 'jsonb')
      .addColumn('webhook_url', 'text')
      .addColumn('webhook_created_at', 'timestamptz')
      .addColumn('webhook_updated_at', 'timestamptz')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createTable('inter_tokens')
      .addColumn('token', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull().references('inter_clients.client_id'))
      // SHA-256 of the client certificate the token was issued over: it is honoured over that one only.
      .addColumn('cert_fingerprint', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('inter_charges')
      .addColumn('codigo_solicitacao', 'uuid', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull().references('inter_clients.client_id'))
      .addColumn('seu_numero', 'text', (c) => c.notNull())
      .addColumn('request', 'jsonb', (c) => c.notNull())
      .addColumn('amount_cents', 'bigint', (c) => c.notNull().check(sql`amount_cents > 0`))
      .addColumn('due_date', 'text', (c) => c.notNull())
      .addColumn('issue_date', 'text', (c) => c.notNull())
      .addColumn('situacao', 'text', (c) => c.notNull())
      .addColumn('data_situacao', 'text', (c) => c.notNull())
      .addColumn('fails_issue', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('issue_at', 'timestamptz', (c) => c.notNull())
      .addColumn('nosso_numero', 'text')
      .addColumn('barcode', 'text')
      .addColumn('typeable_line', 'text')
      .addColumn('txid', 'text')
      .addColumn('pix_copy_and_paste', 'text')
      .addColumn('cancel_reason', 'text')
      .addColumn('paid_at', 'timestamptz')
      .addColumn('amount_paid_cents', 'bigint')
      .addColumn('payment_origin', 'text', (c) => c.check(sql`payment_origin in ('BOLETO', 'PIX')`))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    // nossoNumero is unique per account (client), not across the sandbox: that is what a real bank does.
    await sql`create unique index inter_charges_our_number_idx on inter_charges (client_id, nosso_numero) where nosso_numero is not null`.execute(
      db,
    );
    await db.schema.createIndex('inter_charges_nosso_numero_idx').on('inter_charges').column('nosso_numero').execute();
    await db.schema
      .createIndex('inter_charges_seu_numero_idx')
      .on('inter_charges')
      .columns(['client_id', 'seu_numero'])
      .execute();
    await db.schema
      .createTable('inter_notifications')
      .addColumn('notification_id', 'uuid', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull().references('inter_clients.client_id'))
      .addColumn('codigo_solicitacao', 'uuid', (c) => c.notNull().references('inter_charges.codigo_solicitacao'))
      .addColumn('url', 'text', (c) => c.notNull())
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
    await sql`create index inter_notifications_due_idx on inter_notifications (next_attempt_at) where status = 'pending'`.execute(
      db,
    );
  },
};
