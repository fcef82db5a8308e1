import { startPartitionMaintenance } from '@payments/db';
import { startPeriodic } from '@payments/lifecycle';
import type { Logger } from '@payments/logger';
import { sql, type Kysely } from 'kysely';
import { logTables, tuneLogPartitions } from './log-tables';
import { SCHEMA } from './migrations';
import type { CallbacksDatabase } from './schema';

/** Keys deleted per statement: short transactions, a bounded lock on the key table's pages. */
const KEY_BATCH = 10_000;

/**
 * The delivery log's upkeep besides its partitions (libs/db partition maintenance creates and drops
 * those): event_keys rows past the retention, and settings on partitions created since the last run.
 */
export class LogUpkeep {
  constructor(private readonly db: Kysely<CallbacksDatabase>) {}

  /**
   * Deletes the keys of events created more than `retentionDays` and one day ago (a day after their
   * partition can go, so a lookup never misses an event still logged), in batches, oldest pages first
   * by the BRIN index. A republished event older than that is stored again. Answers how many went.
   */
  async pruneKeys(retentionDays: number, maxBatches = 100): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < maxBatches; i++) {
      const result = await sql`
        delete from event_keys where ctid = any(array(
          select ctid from event_keys where created_at < now() - make_interval(days => ${retentionDays + 1})
          limit ${KEY_BATCH}))`.execute(this.db);
      const n = Number(result.numAffectedRows ?? 0);
      deleted += n;
      if (n < KEY_BATCH) break;
    }
    return deleted;
  }

  /** Partitions given their settings (see tuneLogPartitions). */
  tunePartitions(): Promise<string[]> {
    return tuneLogPartitions(this.db as unknown as Kysely<unknown>);
  }
}

/** Between runs of the log's upkeep, as libs/db's partition maintenance runs by default. */
const LOG_UPKEEP_INTERVAL_MS = 3_600_000;

/**
 * The delivery log's maintenance in the background of a service: libs/db's partition maintenance
 * (days created ahead, days past the retention dropped) and, after each of its first runs, the
 * upkeep above. Every instance runs both; they tolerate each other. `stop` ends both.
 */
export function startLogMaintenance(
  db: Kysely<CallbacksDatabase>,
  retentionDays: number,
  logger: Logger,
): { stop(): Promise<void> } {
  const untyped = db as unknown as Kysely<unknown>;
  const partitions = startPartitionMaintenance({
    db: untyped,
    schema: SCHEMA,
    tables: logTables(retentionDays),
    logger,
  });
  const upkeep = new LogUpkeep(db);
  const periodic = startPeriodic(
    async () => {
      await partitions.firstRun;
      await upkeep.tunePartitions();
      await upkeep.pruneKeys(retentionDays);
    },
    { intervalMs: LOG_UPKEEP_INTERVAL_MS, logger, what: 'callback log upkeep', runAtStart: true },
  );
  return {
    async stop() {
      await periodic.stop();
      await partitions.stop();
    },
  };
}
