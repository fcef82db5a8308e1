import { sql, type Kysely, type Migration } from 'kysely';

export const registrationStats: Migration = {
  async up(db: Kysely<unknown>) {
    // When the provider registered a charge: what the registration statistics count. Rows registered
    // before this migration stay null (the statistics start with it; they look back 8 days at most).
    await sql`alter table receivables add column registered_at timestamptz`.execute(db);
    // The statistics' indexes on receivables and state_history are built concurrently after the
    // migrations (onlineIndexes below): a build in this transaction would hold charge intake and
    // every state change for its whole length.
    // Per tenant and minute, re-aggregated from those rows by the rollup (domain/registration-stats.ts).
    await sql`create table registrations_per_minute (
      minute timestamptz not null,
      tenant_id uuid not null,
      registered integer not null,
      failed integer not null,
      constraint registrations_per_minute_pk primary key (minute, tenant_id)
    )`.execute(db);
  },
};
