import { sql, type Kysely, type Migration } from 'kysely';

export const idempotencyKeys: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('tenant_id', 'uuid', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('locked_at', 'timestamptz')
      .addColumn('status_code', 'integer')
      .addColumn('response_body', 'text')
      .addColumn('response_headers', 'jsonb')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['tenant_id', 'key'])
      .execute();
    await db.schema.createIndex('idempotency_keys_expiry_idx').on('idempotency_keys').column('expires_at').execute();
  },
};
