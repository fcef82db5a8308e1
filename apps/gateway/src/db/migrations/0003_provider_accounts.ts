import { sql, type Kysely, type Migration } from 'kysely';

export const providerAccounts: Migration = {
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
};
