import { sql, type Kysely, type Migration } from 'kysely';

export const registrationWaits: Migration = {
  async up(db: Kysely<unknown>) {
    // Attempts the bank did not take, on the charge itself (a charge stuck on an unreachable bank
    // is visible): how many, the bank's last answer and when. Nullable or defaulted: no table rewrite.
    await sql`alter table receivables
      add column registration_attempts integer not null default 0,
      add column registration_last_error text,
      add column registration_last_attempt_at timestamptz`.execute(db);
  },
};
