import type { ColumnType, Generated, Selectable } from 'kysely';
import type { TraceCarrier } from '@payments/telemetry';

/**
 * Tables of schema `callbacks` (migration 0009): `events` is the delivery queue (what is owed:
 * pending events, and dead ones until retried), `event_log` every event by day, `attempts` every
 * delivery attempt by day, `event_keys` each event's day by id.
 */
export type EventStatus = 'pending' | 'delivered' | 'dead';

export interface EventsTable {
  event_id: string;
  tenant_id: string;
  event_type: string;
  url: string;
  /** Host of the URL, to bound concurrency per receiving host. */
  target_host: string;
  /** The exact JSON body sent (and signed) on every attempt. */
  body: string;
  status: EventStatus;
  attempt_count: number;
  /** Failed attempts in the current run of the schedule (a manual retry starts a new run). */
  failures_in_run: number;
  next_attempt_at: Date | null;
  /** Set while one worker delivers the event; other workers skip it until then. */
  locked_until: Date | null;
  /** New at each claim (migration 0005): only the claim holding it writes the attempt's outcome. */
  lease_token: string | null;
  /** The worker whose claim this is (migration 0006): its claims go back to the queue when its lease lapses. */
  worker_id: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  delivered_at: Date | null;
  dead_at: Date | null;
  /** W3C trace context of the callback request (see migration 0002): attempts are traced as its children. */
  trace_context: ColumnType<TraceCarrier | null, string | null | undefined, string | null>;
  /** The charge a receivable's callback is about (migration 0007); null for others and older rows. */
  receivable_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface AttemptsTable {
  id: Generated<string>;
  event_id: string;
  tenant_id: string;
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** First KiB of the receiver's answer, for diagnosis. */
  response_excerpt: string | null;
  /** The event's receiving host (migration 0009; filled by a trigger when a writer leaves it out). */
  target_host: ColumnType<string | null, string | null | undefined, never>;
}

/** An event's created_at by id (migration 0009): which day of event_log holds it. */
export interface EventKeysTable {
  event_id: string;
  created_at: Date;
}

/** One row per delivering worker, kept alive by its heartbeat (migration 0006). */
export interface WorkersTable {
  worker_id: string;
  alive_until: Date;
  started_at: ColumnType<Date, Date | undefined, never>;
}

/** Deliveries per minute, tenant and receiving host (migration 0007), rebuilt by the rollup. */
export interface DeliveryMinutesTable {
  minute: Date;
  tenant_id: string;
  target_host: string;
  delivered: number;
  failed: number;
  dead: number;
  /** Sparse histogram of attempt durations: bucket indexes (DURATION_BOUNDS_MS) and their counts. */
  duration_buckets: number[];
  duration_counts: number[];
  duration_max_ms: number | null;
  /** Sparse histogram of deliveries' end-to-end latency (migration 0010): LATENCY_BOUNDS_MS indexes and counts. */
  latency_buckets: ColumnType<number[], number[] | undefined, number[]>;
  latency_counts: ColumnType<number[], number[] | undefined, number[]>;
  /** bigint: pg answers it as a string. */
  latency_max_ms: ColumnType<string | null, number | null | undefined, number | null>;
  last_failure_at: Date | null;
  last_error: string | null;
}

/** The rollup's watermark (one row). */
export interface DeliveryRollupTable {
  id: ColumnType<boolean, boolean | undefined, never>;
  rolled_until: Date;
}

export interface CallbacksDatabase {
  events: EventsTable;
  /** Partitioned by day on created_at; the same columns as events (its status mirrored by a trigger). */
  event_log: EventsTable;
  event_keys: EventKeysTable;
  attempts: AttemptsTable;
  workers: WorkersTable;
  delivery_minutes: DeliveryMinutesTable;
  delivery_rollup: DeliveryRollupTable;
}

export type EventRow = Selectable<EventsTable>;
export type AttemptRow = Selectable<AttemptsTable>;
