import { sql, type Kysely, type Migration } from 'kysely';

export const pixProviderAccounts: Migration = {
  // A `pix` account: any bank's PIX API on the Central Bank's standard (docs/providers/pix.md). The
  // wider check is NOT VALID: every stored version meets the narrower one, so none is read under the lock.
  async up(db: Kysely<unknown>) {
    await sql`alter table provider_accounts
          drop constraint provider_accounts_provider_check,
          add constraint provider_accounts_provider_check check (provider in ('sandbox', 'inter', 'pix')) not valid`.execute(
      db,
    );
  },
};
