import { sql, type Kysely, type Migration } from 'kysely';

export const rateLimitBuckets: Migration = {
  // One token bucket per tenant, shared by every gateway instance (see db/admit-requests.ts).
  async up(db: Kysely<unknown>) {
    await sql`create table rate_limit_buckets (
          key text primary key,
          tokens double precision not null,
          updated_at timestamptz not null
        )`.execute(db);
  },
};
