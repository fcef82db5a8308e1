import { sql, type Kysely, type Migration } from 'kysely';

export const bankCallBudgets: Migration = {
  async up(db: Kysely<unknown>) {
    // The bank's per-minute limits shared by every instance: a token bucket per bank account and endpoint,
    // and until when the bank said to wait (a 429's Retry-After, a 403's growing delay).
    await sql`create table call_budgets (
      bucket text not null,
      endpoint text not null,
      tokens double precision not null,
      refreshed_at timestamptz not null,
      blocked_until timestamptz not null default '-infinity',
      constraint call_budgets_pk primary key (bucket, endpoint)
    )`.execute(db);
    // One OAuth token per bank account for every instance, sealed like the credentials it was got with;
    // refreshing_until: the lease of the one instance asking the bank for a new one.
    await sql`create table bank_tokens (
      bank_account text primary key,
      sealed_token text,
      token_digest text,
      usable_until timestamptz,
      refreshing_until timestamptz
    )`.execute(db);
  },
};
