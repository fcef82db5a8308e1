import { sql, type Kysely, type Migration } from 'kysely';
import { claimDueEventsFunction } from './claim-due-events';

export const leaseFencing: Migration = {
  async up(db: Kysely<unknown>) {
    // Fencing: each claim writes a new lease_token, and an attempt's outcome is written
    // only while the row still carries the token of the claim that made it. A worker whose lease ran
    // out (stalled, cut off from Postgres) and was claimed again cannot overwrite the later outcome.
    await db.schema.alterTable('events').addColumn('lease_token', 'uuid').execute();
    await claimDueEventsFunction(
      sql`next_attempt_at = now() + lease, locked_until = now() + lease, lease_token = gen_random_uuid()`,
    ).execute(db);
  },
};
