import { sql, type Kysely, type Migration } from 'kysely';

export const registrationMarks: Migration = {
  async up(db: Kysely<unknown>) {
    // Written and committed before the first create of a charge is sent: a receivable with a
    // mark may have a charge at the bank, so every later attempt looks it up (Inter: by seuNumero, the
    // bank_reference) before it creates anything, whatever process or message copy makes that attempt.
    await sql`create table registration_marks (
      receivable_id uuid primary key references receivables (id),
      provider_account_id uuid,
      bank_reference text not null,
      marked_at timestamptz not null default now()
    )`.execute(db);
  },
};
