import { sql, type Kysely, type Migration } from 'kysely';
import { claimDueEventsFunction } from './claim-due-events';

export const workerLeases: Migration = {
  async up(db: Kysely<unknown>) {
    // Claims held by a worker that died are taken over within seconds (15 s): each worker
    // keeps one row alive (alive_until) by a heartbeat, and its claimed events name it. Renewing the
    // lease of every held event instead would rewrite up to CALLBACK_MAX_HELD rows (and their index
    // entries) every few seconds; this is one row per worker. When a worker's row lapses, any worker
    // gives its events back to the queue (reap). The row-level lease (locked_until) stays as a bound
    // on how long a claim lasts if everything else fails.
    await db.schema
      .createTable('workers')
      .addColumn('worker_id', 'uuid', (c) => c.primaryKey())
      .addColumn('alive_until', 'timestamptz', (c) => c.notNull())
      .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema.alterTable('events').addColumn('worker_id', 'uuid').execute();
    // Only claimed rows are in it: a reap reads the dead worker's rows and nothing else.
    await sql`create index events_worker_idx on events (worker_id) where worker_id is not null`.execute(db);
    // A new overload naming the claiming worker. The five-argument function stays for instances of the
    // previous version during a rolling upgrade (their claims carry no worker and end with their lease).
    await claimDueEventsFunction(
      sql`next_attempt_at = now() + lease, locked_until = now() + lease, lease_token = gen_random_uuid(), worker_id = worker`,
      sql`, worker uuid`,
    ).execute(db);
  },
};
