import type { Context } from '@opentelemetry/api';
import type { JobOutcome } from '@payments/contracts';

/* What a service hands DurableStreams to consume a stream, and what it gets back. */

/** consumeFairly's default window: messages held at once, queued per key. */
export const DEFAULT_FAIR_WINDOW = 512;

/**
 * Handles a batch; may return one outcome per item (same order) to retry some of them. Returning
 * nothing acks them all; throwing retries them all after a second, uncounted: a batch's failure is its
 * store's, not one message's (a message's own fault, poison, is dead-lettered before the handler). `contexts` holds, per item, the
 * context of its own CONSUMER span (a child of its producer's): what to keep with the item when its
 * work goes on later, so that work stays in the trace that produced it.
 */
export type BatchHandler<T> = (
  items: T[],
  info: { deliveryCounts: number[]; contexts: Context[] },
) => Promise<void | JobOutcome[]>;

/**
 * deliveryCount is 1 on the first delivery. Returning `{ retryInMs }` (e.g. the provider is down) retries
 * the message without counting a failure; throwing counts one, and after JOB_MAX_FAILURES of them the
 * message is dead-lettered (see JobFailures).
 */
export type MessageHandler<T> = (item: T, info: { deliveryCount: number }) => Promise<JobOutcome>;

/** consumeFairly's options (see there). */
export interface FairOptions<T> {
  /** The queue a message goes to (e.g. its tenant): keys take turns at the slots. */
  key: (item: T) => string;
  /** Slots for any key; default 16. */
  concurrency?: number;
  /** Slots beyond `concurrency` only for a key with nothing running; default 0. */
  spare?: number;
  ackWaitMs?: number;
  /** Messages held at once, queued and in flight; default DEFAULT_FAIR_WINDOW. */
  window?: number;
}

export interface Consumption {
  /** Stops taking messages and waits for the batch in hand to be handled and acked. */
  stop(): Promise<void>;
}
