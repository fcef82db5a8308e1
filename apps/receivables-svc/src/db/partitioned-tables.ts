import type { PartitionedTable } from '@payments/db';
import { NOTICE_RETENTION_DAYS } from './notice-retention';

/** RECEIVABLE_HISTORY_RETENTION_DAYS unless set: five years of state history. */
export const HISTORY_RETENTION_DAYS_DEFAULT = 5 * 365 + 1;

/**
 * receivables-svc's tables partitioned by time (libs/db partitions.ts), one partition a month, and
 * how long each keeps its rows: the logs that grow with traffic, the state history (every state
 * change) and the bank's notices. The tables left unpartitioned, and why, are listed in
 * docs/architecture.md (Receivables over the years).
 */
export function partitionedTables(settings: { historyRetentionDays: number }): PartitionedTable[] {
  return [
    { table: 'state_history', period: 'month', retentionDays: settings.historyRetentionDays },
    { ...BANK_NOTICE_LOG, retentionDays: NOTICE_RETENTION_DAYS },
  ];
}

/** The state history's partitioning, as the migration that converts it creates its first partitions. */
export const STATE_HISTORY: PartitionedTable = { table: 'state_history', period: 'month' };

/** The bank notices' log, as the migration that splits it from their queue creates its first partitions. */
export const BANK_NOTICE_LOG: PartitionedTable = { table: 'bank_notice_log', period: 'month' };
