import { sql, type Kysely, type Migration } from 'kysely';

export const tenantsAndTokens: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('tenants')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) =>
        c
          .notNull()
          .defaultTo('active')
          .check(sql`status in ('active', 'disabled')`),
      )
      .addColumn('signing_secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('disabled_at', 'timestamptz')
      .execute();
    await db.schema
      .createTable('integration_tokens')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id'))
      .addColumn('token_hash', 'bytea', (c) => c.notNull().unique())
      .addColumn('token_hint', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('revoked_at', 'timestamptz')
      .addColumn('last_used_at', 'timestamptz')
      .execute();
    await db.schema.createIndex('integration_tokens_tenant_idx').on('integration_tokens').column('tenant_id').execute();
    await db.schema
      .createTable('jwt_keys')
      .addColumn('kid', 'text', (c) => c.primaryKey())
      .addColumn('private_key_pem', 'text', (c) => c.notNull())
      .addColumn('public_key_pem', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
};
