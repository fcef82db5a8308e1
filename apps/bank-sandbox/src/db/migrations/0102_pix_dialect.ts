import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The PIX API's tables (migration 0102_pix_dialect), for both of its dialects
 * (Inter's and the Central Bank standard's): charges with a due date (cobv) of the integrations of
 * inter_clients, the PIX received, their devoluções, the webhooks per key and the notices to them.
 */
export const pixDialectMigration: Migration = {
  async up(db: Kysely<unknown>) {
    // Locations are numbered as a PSP numbers them (loc.id), one sequence for the whole sandbox.
    await sql`create sequence pix_loc_seq as bigint minvalue 1 no cycle`.execute(db);
    await db.schema
      .createTable('pix_cobv')
      // A txid is unique across the sandbox (the standard asks per receiver): the pay control by txid is never ambiguous.
      .addColumn('txid', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull().references('inter_clients.client_id'))
      .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('status', 'text', (c) =>
        c
          .notNull()
          .check(sql`status in ('ATIVA', 'CONCLUIDA', 'REMOVIDA_PELO_USUARIO_RECEBEDOR', 'REMOVIDA_PELO_PSP')`),
      )
      // The body as sent (calendario, devedor, valor with multa, juros, desconto, abatimento), latest revision.
      .addColumn('request', 'jsonb', (c) => c.notNull())
      // Every revision's body, revision 0 first (GET /cobv/{txid}?revisao=n).
      .addColumn('revisions', 'jsonb', (c) => c.notNull())
      .addColumn('chave', 'text', (c) => c.notNull())
      .addColumn('due_date', 'text', (c) => c.notNull())
      .addColumn('days_payable_after_due', 'integer', (c) => c.notNull())
      .addColumn('amount_cents', 'bigint', (c) => c.notNull().check(sql`amount_cents > 0`))
      .addColumn('loc_id', 'bigint', (c) => c.notNull().unique())
      .addColumn('loc_token', 'text', (c) => c.notNull().unique())
      .addColumn('location', 'text', (c) => c.notNull())
      .addColumn('pix_copy_and_paste', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('loc_created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('status_changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createIndex('pix_cobv_client_created_idx')
      .on('pix_cobv')
      .columns(['client_id', 'created_at'])
      .execute();
    await sql`create index pix_cobv_active_due_idx on pix_cobv (due_date) where status = 'ATIVA'`.execute(db);
    await db.schema
      .createTable('pix_received')
      .addColumn('end_to_end_id', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull().references('inter_clients.client_id'))
      // A cobv's txid, or the txid of an Inter boleto paid by PIX (both are listed by GET /pix), or none.
      .addColumn('txid', 'text')
      .addColumn('chave', 'text', (c) => c.notNull())
      .addColumn('amount_cents', 'bigint', (c) => c.notNull().check(sql`amount_cents > 0`))
      // componentesValor in cents: original, multa, juros, desconto, abatimento.
      .addColumn('components', 'jsonb', (c) => c.notNull())
      .addColumn('info_pagador', 'text')
      .addColumn('paid_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('pix_received_client_paid_idx')
      .on('pix_received')
      .columns(['client_id', 'paid_at'])
      .execute();
    await db.schema.createIndex('pix_received_txid_idx').on('pix_received').column('txid').execute();
    await db.schema
      .createTable('pix_refunds')
      .addColumn('end_to_end_id', 'text', (c) => c.notNull().references('pix_received.end_to_end_id'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('rtr_id', 'text', (c) => c.notNull().unique())
      .addColumn('amount_cents', 'bigint', (c) => c.notNull().check(sql`amount_cents > 0`))
      .addColumn('natureza', 'text', (c) => c.notNull())
      .addColumn('descricao', 'text')
      .addColumn('status', 'text', (c) =>
        c.notNull().check(sql`status in ('EM_PROCESSAMENTO', 'DEVOLVIDO', 'NAO_REALIZADO')`),
      )
      .addColumn('requested_at', 'timestamptz', (c) => c.notNull())
      .addColumn('settled_at', 'timestamptz')
      .addPrimaryKeyConstraint('pix_refunds_pk', ['end_to_end_id', 'id'])
      .execute();
    await db.schema
      .createTable('pix_webhooks')
      .addColumn('client_id', 'text', (c) => c.notNull().references('inter_clients.client_id'))
      .addColumn('chave', 'text', (c) => c.notNull())
      .addColumn('webhook_url', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addPrimaryKeyConstraint('pix_webhooks_pk', ['client_id', 'chave'])
      .execute();
    await db.schema
      .createTable('pix_notifications')
      .addColumn('notification_id', 'uuid', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull().references('inter_clients.client_id'))
      .addColumn('end_to_end_id', 'text', (c) => c.notNull().references('pix_received.end_to_end_id'))
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
    await sql`create index pix_notifications_due_idx on pix_notifications (next_attempt_at) where status = 'pending'`.execute(
      db,
    );
  },
};
