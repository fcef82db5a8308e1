import type { OnlineIndex } from '@payments/db';

/**
 * Indexes on the large tables, built with CREATE INDEX CONCURRENTLY in the background after the
 * migrations (libs/db ensureOnlineIndexes). None since 0009: those of 0007 (by receivable, by dead_at,
 * attempts by attempted_at) were on the old table, now the log's first partition, where 0009 attaches
 * them to the log's own; the queue is small and indexed in its migration. A partitioned table takes
 * no concurrent build.
 */
export const onlineIndexes: OnlineIndex[] = [];
