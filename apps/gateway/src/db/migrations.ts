import { sql, type Kysely, type Migration } from 'kysely';

export const SCHEMA = 'gateway';

export const migrations: Record<string, Migration> = {
  '0001_tenants_and_tokens': {
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
      await db.schema
        .createIndex('integration_tokens_tenant_idx')
        .on('integration_tokens')
        .column('tenant_id')
        .execute();
      await db.schema
        .createTable('jwt_keys')
        .addColumn('kid', 'text', (c) => c.primaryKey())
        .addColumn('private_key_pem', 'text', (c) => c.notNull())
        .addColumn('public_key_pem', 'text', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
    },
  },
  '0002_idempotency_keys': {
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
  },
  '0003_provider_accounts': {
    // One row per version: setting an account supersedes the current row and adds one, so a charge
    // accepted under a version keeps it. At most one current version per tenant.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('provider_accounts')
        .addColumn('id', 'uuid', (c) => c.primaryKey())
        .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id'))
        .addColumn('provider', 'text', (c) => c.notNull().check(sql`provider in ('sandbox', 'inter')`))
        .addColumn('account_key', 'text', (c) => c.notNull())
        .addColumn('beneficiary', 'jsonb', (c) => c.notNull())
        .addColumn('base_url', 'text')
        .addColumn('sealed_credentials', 'text')
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn('superseded_at', 'timestamptz')
        .execute();
      await db.schema
        .createIndex('provider_accounts_current_idx')
        .on('provider_accounts')
        .column('tenant_id')
        .unique()
        .where(sql.ref('superseded_at'), 'is', null)
        .execute();
      // The newest credentials of one bank account (tenants.provider-credentials).
      await db.schema
        .createIndex('provider_accounts_key_idx')
        .on('provider_accounts')
        .columns(['tenant_id', 'account_key', 'created_at'])
        .execute();
    },
  },
};
