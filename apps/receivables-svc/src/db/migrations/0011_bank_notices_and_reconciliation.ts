import { sql, type Kysely, type Migration } from 'kysely';

export const bankNoticesAndReconciliation: Migration = {
  async up(db: Kysely<unknown>) {
    // Every bank notice is stored before it is answered, then applied by a worker: a notice
    // for a charge not known yet, or one the bank does not confirm yet, waits here for its next attempt.
    // Reconciliation stores what it finds here too, once per bank account, charge and kind (dedup_key).
    await sql`create table bank_notices (
      id bigserial primary key,
      provider_account_id uuid not null,
      tenant_id uuid not null,
      account_key text not null,
      charge_id text not null,
      kind text not null check (kind in ('paid', 'cancelled', 'other')),
      situation text not null,
      situation_at timestamptz,
      situation_at_precision text not null check (situation_at_precision in ('time', 'date')),
      amount_received_cents bigint,
      payment_method text,
      source text not null check (source in ('webhook', 'list', 'history', 'cancel')),
      verified boolean not null,
      dedup_key text,
      received_at timestamptz not null default now(),
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      applied_at timestamptz,
      outcome text,
      last_error text
    )`.execute(db);
    await sql`create index bank_notices_due_idx on bank_notices (next_attempt_at) where applied_at is null`.execute(db);
    await sql`create unique index bank_notices_dedup_idx on bank_notices (tenant_id, account_key, dedup_key)
      where dedup_key is not null`.execute(db);
    // One row per bank account swept: the lease (one instance sweeps it at a time) and how far it got.
    await sql`create table reconciliation_accounts (
      tenant_id uuid not null,
      account_key text not null,
      holder text,
      leased_until timestamptz not null default '-infinity',
      last_complete_at timestamptz,
      callbacks_until timestamptz,
      constraint reconciliation_accounts_pk primary key (tenant_id, account_key)
    )`.execute(db);
  },
};
