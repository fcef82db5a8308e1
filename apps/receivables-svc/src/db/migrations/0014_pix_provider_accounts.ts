import { sql, type Kysely, type Migration } from 'kysely';

export const pixProviderAccounts: Migration = {
  async up(db: Kysely<unknown>) {
    // `pix` accounts: any bank that speaks the Central Bank's PIX API. The wider check is NOT VALID:
    // every stored version meets the narrower one, so the table is not read under the lock.
    await sql`alter table provider_accounts
      drop constraint provider_accounts_provider_check,
      add constraint provider_accounts_provider_check check (provider in ('sandbox', 'inter', 'pix')) not valid`.execute(
      db,
    );
  },
};
