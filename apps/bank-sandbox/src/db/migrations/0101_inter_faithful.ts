import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The dialect made faithful to Inter (migration 0101_inter_faithful): integrations issued by the
 * sandbox (a fixed secret, a certificate of their own), the payer's tax id for the 30-minute duplicate
 * window, and every attempt to deliver a notice (the webhook callback history).
 */
export const interFaithfulMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('inter_clients')
      .addColumn('integration', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('cert_fingerprint', 'text')
      .execute();
    await db.schema.alterTable('inter_charges').addColumn('payer_tax_id', 'text').execute();
    await sql`update inter_charges set payer_tax_id = request->'pagador'->>'cpfCnpj'`.execute(db);
    await db.schema
      .createIndex('inter_charges_duplicate_idx')
      .on('inter_charges')
      .columns(['client_id', 'seu_numero', 'created_at'])
      .execute();
    await db.schema
      .createTable('inter_notice_attempts')
      .addColumn('attempt_id', 'uuid', (c) => c.primaryKey())
      .addColumn('notification_id', 'uuid', (c) => c.notNull().references('inter_notifications.notification_id'))
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('codigo_solicitacao', 'uuid', (c) => c.notNull())
      .addColumn('webhook_url', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('attempt_number', 'integer', (c) => c.notNull())
      .addColumn('fired_at', 'timestamptz', (c) => c.notNull())
      .addColumn('success', 'boolean', (c) => c.notNull())
      .addColumn('http_status', 'integer')
      .addColumn('error_message', 'text')
      .execute();
    await db.schema
      .createIndex('inter_notice_attempts_fired_idx')
      .on('inter_notice_attempts')
      .columns(['client_id', 'fired_at'])
      .execute();
  },
};
