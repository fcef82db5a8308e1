import type { Kysely } from 'kysely';
import { startPartitionMaintenance } from '@payments/db';
import { startPeriodic } from '@payments/lifecycle';
import type { Logger } from '@payments/logger';
import { SCHEMA } from '../db/migrations';
import { pruneNotices } from '../db/notice-retention';
import { partitionedTables } from '../db/partitioned-tables';
import type { ReceivablesDatabase } from '../db/schema';
import { foldStateCounts } from '../domain/state-counts';

/** Every 5 s: the changes a metrics scrape adds up beside the counts stay a few seconds' worth. */
export const STATE_COUNT_FOLD_INTERVAL_MS = 5_000;

/** Hourly, as the partitions: a run deletes up to two million rows a table, hours of peak traffic. */
export const NOTICE_PRUNING_INTERVAL_MS = 3_600_000;

export interface DataUpkeep {
  /** Stops both and waits for runs under way. */
  stop(): Promise<void>;
}

/**
 * What keeps the schema's size in bounds as the years go by, on every instance (their runs tolerate
 * each other): monthly partitions (state history, bank notices) created ahead and dropped past their
 * retention, and the keys of the bank's notices past theirs deleted, hourly; the state counters'
 * changes folded.
 */
export function startDataUpkeep(deps: {
  db: Kysely<ReceivablesDatabase>;
  logger: Logger;
  historyRetentionDays: number;
}): DataUpkeep {
  const partitions = startPartitionMaintenance({
    db: deps.db as unknown as Kysely<unknown>,
    schema: SCHEMA,
    tables: partitionedTables({ historyRetentionDays: deps.historyRetentionDays }),
    logger: deps.logger,
  });
  const fold = startPeriodic(() => foldStateCounts(deps.db), {
    intervalMs: STATE_COUNT_FOLD_INTERVAL_MS,
    logger: deps.logger,
    what: 'state count fold',
    runAtStart: true,
  });
  let stopping = false;
  const notices = startPeriodic(
    async () => {
      const pruned = await pruneNotices(deps.db, { stopping: () => stopping });
      if (pruned.providerEvents > 0 || pruned.noticeKeys > 0)
        deps.logger.info(pruned, 'bank notice keys past retention deleted');
    },
    { intervalMs: NOTICE_PRUNING_INTERVAL_MS, logger: deps.logger, what: 'bank notice retention', runAtStart: true },
  );
  return {
    async stop() {
      stopping = true;
      await fold.stop();
      await notices.stop();
      await partitions.stop();
    },
  };
}
