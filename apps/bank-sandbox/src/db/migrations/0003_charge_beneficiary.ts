import type { Kysely, Migration } from 'kysely';

// Whose each charge is: the beneficiary it was issued for and the caller's account id; null = the sandbox's own payee.
export const chargeBeneficiary: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('charges')
      .addColumn('beneficiary', 'jsonb')
      .addColumn('account_reference', 'text')
      .execute();
  },
};
