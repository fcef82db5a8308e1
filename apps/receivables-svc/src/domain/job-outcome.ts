import type { JobOutcome } from '@payments/contracts';

/** Exponential backoff for a provider that is down: 1 s, 2 s, 4 s ... up to a minute. */
export function backoff(deliveryCount: number): JobOutcome {
  return { retryInMs: Math.min(60_000, 1_000 * 2 ** Math.max(0, deliveryCount - 1)) };
}
