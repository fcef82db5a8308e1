import type { OnlineIndex } from '@payments/db';
import type { Migration } from 'kysely';
import { eventsAndAttempts } from './0001_events_and_attempts';
import { eventTraceContext } from './0002_event_trace_context';
import { claimDueEvents } from './0003_claim_due_events';
import { claimDueEventsPerHost } from './0004_claim_due_events_per_host';
import { leaseFencing } from './0005_lease_fencing';
import { workerLeases } from './0006_worker_leases';
import { deliveryStats } from './0007_delivery_stats';
import { claimDueEventsPerTenant } from './0008_claim_due_events_per_tenant';
import { queueApartFromLog } from './0009_queue_apart_from_log';
import { deliveryLatency } from './0010_delivery_latency';

export { SCHEMA } from './schema-name';

/** The schema's migrations in the order they run, one file each, named after its key. */
export const migrations: Record<string, Migration> = {
  '0001_events_and_attempts': eventsAndAttempts,
  '0002_event_trace_context': eventTraceContext,
  '0003_claim_due_events': claimDueEvents,
  '0004_claim_due_events_per_host': claimDueEventsPerHost,
  '0005_lease_fencing': leaseFencing,
  '0006_worker_leases': workerLeases,
  '0007_delivery_stats': deliveryStats,
  '0008_claim_due_events_per_tenant': claimDueEventsPerTenant,
  '0009_queue_apart_from_log': queueApartFromLog,
  '0010_delivery_latency': deliveryLatency,
};

/**
 * Indexes on the large tables, built with CREATE INDEX CONCURRENTLY in the background after the
 * migrations (libs/db ensureOnlineIndexes). None since 0009: those of 0007 (by receivable, by dead_at,
 * attempts by attempted_at) were on the old table, now the log's first partition, where 0009 attaches
 * them to the log's own; the queue is small and indexed in its migration. A partitioned table takes
 * no concurrent build.
 */
export const onlineIndexes: OnlineIndex[] = [];
