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
