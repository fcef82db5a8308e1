import { sql, type Kysely, type Migration } from 'kysely';

export const providerAccounts: Migration = {
  async up(db: Kysely<unknown>) {
    // Each tenant's provider account, one immutable version per row (id = ProviderAccountVersion.account_id).
    await db.schema
      .createTable('provider_accounts')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('tenant_id', 'uuid', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull().check(sql`provider in ('sandbox', 'inter')`))
      .addColumn('account_key', 'text', (c) => c.notNull())
      .addColumn('beneficiary', 'jsonb', (c) => c.notNull())
      .addColumn('base_url', 'text')
      .addColumn('sealed_credentials', 'text')
      .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    // Null: accepted before accounts existed (registered with the bank sandbox and its own default payee).
    await db.schema
      .alterTable('receivables')
      .addColumn('provider_account_id', 'uuid', (c) => c.references('provider_accounts.id'))
      .execute();
    // A real bank's charge ids and our_numbers are unique per account only; legacy rows stay unique on their own.
    await sql`drop index receivables_provider_charge_uq`.execute(db);
    await sql`create unique index receivables_account_charge_uq on receivables (provider_account_id, provider_charge_id)
      where provider_charge_id is not null and provider_account_id is not null`.execute(db);
    await sql`create unique index receivables_legacy_charge_uq on receivables (provider_charge_id)
      where provider_charge_id is not null and provider_account_id is null`.execute(db);
    await sql`create index receivables_account_our_number_idx on receivables (provider_account_id, our_number)
      where our_number is not null`.execute(db);
    // Which account a provider event was about (null: a legacy sandbox charge), for tracing a payment back.
    await db.schema.alterTable('provider_events').addColumn('provider_account_id', 'uuid').execute();
  },
};
