import type { OnlineIndex } from '@payments/db';
import { searchFilterIndexes } from './search-filter-indexes';

/**
 * Indexes on the large tables, built with CREATE INDEX CONCURRENTLY in the background after the
 * migrations (libs/db ensureOnlineIndexes): writes go on during the build, and the queries they serve
 * work without them (slower) until they are there. Indexes of new, empty tables stay in migrations.
 */
export const onlineIndexes: OnlineIndex[] = [
  // Charges waiting for their bank, by account and age (domain/registration-waits.ts): the metric and the
  // health page read only these rows, never the whole table.
  {
    name: 'receivables_queued_idx',
    table: 'receivables',
    sql: `create index concurrently if not exists receivables_queued_idx on receivables
      (provider_account_id, created_at) where registration_status = 'queued'`,
  },
  // Charges registered in the last minutes, for the registration statistics (receivables.registered_at, 0008).
  {
    name: 'receivables_registered_at_idx',
    table: 'receivables',
    sql: `create index concurrently if not exists receivables_registered_at_idx on receivables (registered_at)
      where registered_at is not null`,
  },
  // Registrations that failed for good (state_history to rejected) have their index made with the
  // partitioned history by migration 0015: a partitioned table takes no concurrent build.
  // Open charges by account and due date: which bank accounts reconciliation sweeps, and their due-date span.
  {
    name: 'receivables_open_by_account_idx',
    table: 'receivables',
    sql: `create index concurrently if not exists receivables_open_by_account_idx on receivables
      (provider_account_id, due_date) where state = 'pending'`,
  },
  // What the retention of the bank's event ids deletes (db/notice-retention.ts), found without a scan.
  {
    name: 'provider_events_received_at_idx',
    table: 'provider_events',
    sql: `create index concurrently if not exists provider_events_received_at_idx on provider_events (received_at)`,
  },
  // Applied notices left the queue for their log by month (migration 0019); the index of that name that
  // earlier releases built stays on the old rows' partition. That partition's part of the log's index
  // on ids, which 0019 leaves to this step rather than build it under its lock.
  {
    name: 'bank_notices_legacy_id_idx',
    table: 'bank_notices_legacy',
    sql: `create index concurrently if not exists bank_notices_legacy_id_idx on bank_notices_legacy (id)`,
    attachTo: 'bank_notice_log_id_idx',
  },
  ...searchFilterIndexes,
];
