import { sql, type Kysely, type Migration } from 'kysely';

export const idempotencyLockToken: Migration = {
  // The lock token of an Idempotency-Key (idempotency/idempotency-store.ts): a slow attempt whose
  // lock was taken over by a retry must not complete or release the key the retry now holds.
  async up(db: Kysely<unknown>) {
    await sql`alter table idempotency_keys add column lock_token uuid`.execute(db);
  },
};
