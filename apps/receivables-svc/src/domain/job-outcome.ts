/** What a background job came to: finished (for good), or to be tried again after a delay. */
export type JobOutcome = 'done' | { retryInMs: number };

/** Exponential backoff for a provider that is down: 1 s, 2 s, 4 s ... up to a minute. */
export function backoff(deliveryCount: number): JobOutcome {
  return { retryInMs: Math.min(60_000, 1_000 * 2 ** Math.max(0, deliveryCount - 1)) };
}
