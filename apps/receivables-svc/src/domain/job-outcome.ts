import { doublingDelayMs } from '@payments/backoff';
import type { JobOutcome } from '@payments/contracts';

/** Exponential backoff for a provider that is down: 1 s, 2 s, 4 s ... up to a minute. */
export function backoff(deliveryCount: number): JobOutcome {
  return { retryInMs: doublingDelayMs(deliveryCount, { firstMs: 1_000, maxMs: 60_000 }) };
}
