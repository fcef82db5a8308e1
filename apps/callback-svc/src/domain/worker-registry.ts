import { sql, type Kysely } from 'kysely';
import type { CallbacksDatabase } from '../db/schema';
import { leaseEnd } from './event-store';

/**
 * The delivering workers' leases in Postgres (migration 0006): one row per worker, kept alive by its
 * heartbeat; the events a worker claims name it. A worker whose row lapses (killed, stalled, cut off)
 * loses its claims: any worker gives them back to the queue, so they are delivered within seconds of
 * the lapse rather than when each row's own lease (CALLBACK_TIMEOUT_MS + 50 s) ends.
 */
export class WorkerRegistry {
  constructor(private readonly db: Kysely<CallbacksDatabase>) {}

  /** A new worker, alive for `leaseMs`. */
  async register(workerId: string, leaseMs: number): Promise<void> {
    await this.db
      .insertInto('workers')
      .values({ worker_id: workerId, alive_until: leaseEnd(leaseMs) })
      .execute();
  }

  /**
   * Extends the worker's lease by `leaseMs` from now. False when it has already lapsed (or been
   * reaped): its claims may have passed to others, and it must not revive them.
   */
  async renew(workerId: string, leaseMs: number): Promise<boolean> {
    const row = await this.db
      .updateTable('workers')
      .set({ alive_until: leaseEnd(leaseMs) })
      .where('worker_id', '=', workerId)
      .where('alive_until', '>', sql<Date>`now()`)
      .returning('worker_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Ends a worker's lease now (a graceful stop): whatever it still holds is taken over at the next reap. */
  async retire(workerId: string): Promise<void> {
    await this.db
      .updateTable('workers')
      .set({ alive_until: sql<Date>`now() - interval '1 millisecond'` })
      .where('worker_id', '=', workerId)
      .execute();
  }

  /**
   * Gives the pending events claimed by lapsed workers back to the queue (due now, their lease token
   * cleared, so a late outcome of the lapsed worker is fenced off) and forgets those workers. Safe from
   * any number of workers at once: each lapsed row is deleted, and its events released, by one of them.
   */
  async reapLapsed(): Promise<{ workers: number; events: number }> {
    // Two statements: the common case (no lapsed worker) reads the few rows of workers and stops; one
    // statement joining events to the deleted ids would scan every claimed row's index entry each time.
    return this.db.transaction().execute(async (trx) => {
      const lapsed = await trx
        .deleteFrom('workers')
        .where('alive_until', '<', sql<Date>`now()`)
        .returning('worker_id')
        .execute();
      if (lapsed.length === 0) return { workers: 0, events: 0 };
      const released = await trx
        .updateTable('events')
        .set({ next_attempt_at: sql<Date>`now()`, locked_until: null, lease_token: null, worker_id: null })
        .where(
          'worker_id',
          'in',
          lapsed.map((w) => w.worker_id),
        )
        .where('status', '=', 'pending')
        .executeTakeFirst();
      return { workers: lapsed.length, events: Number(released.numUpdatedRows) };
    });
  }
}
