import { doublingDelayMs } from '@payments/backoff';

/** A service's stream settings (its config's fields of the same names); the defaults are DEFAULT_*. */
export interface StreamSettings {
  /** JOB_MAX_FAILURES: handler failures after which a job message is dead-lettered. */
  jobMaxFailures?: number;
  /** First retry delay after a failure, doubled per failure up to 5 min. Default 1 s (tests shorten it). */
  jobFailureBackoffMs?: number;
  /** STREAM_MAX_BYTES: every stream's max_bytes; a full stream refuses publishes (discard new). */
  streamMaxBytes?: number;
  /** STREAM_REPLICAS: every stream's num_replicas (3 on a 3-node cluster); default 1. */
  streamReplicas?: number;
  /** A handler error that is a dependency's outage: retried uncounted (BusOptions.isOutage). */
  isOutage?: (err: unknown) => boolean;
}

/** The retry delay of a job held up by an outage: from the failure backoff, doubled per delivery, at most 30 s. */
export function outageRetryMs(deliveryCount: number, firstMs: number): number {
  return doublingDelayMs(deliveryCount, { firstMs, maxMs: 30_000 });
}
