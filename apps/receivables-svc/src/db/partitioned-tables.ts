import type { PartitionedTable } from '@payments/db';

/** RECEIVABLE_HISTORY_RETENTION_DAYS unless set: five years of state history. */
export const HISTORY_RETENTION_DAYS_DEFAULT = 5 * 365 + 1;

/**
 * receivables-svc's tables partitioned by time (libs/db partitions.ts), one partition a month, and
 * how long each keeps its rows. The state history is the log that grows with every state change; the
 * tables left unpartitioned, and why, are listed in docs/architecture.md (Receivables over the years).
 */
export function partitionedTables(settings: { historyRetentionDays: number }): PartitionedTable[] {
  return [{ table: 'state_history', period: 'month', retentionDays: settings.historyRetentionDays }];
}

/** The state history's partitioning, as the migration that converts it creates its first partitions. */
export const STATE_HISTORY: PartitionedTable = { table: 'state_history', period: 'month' };
