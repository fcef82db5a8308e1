/** A delay that starts at `firstMs` and doubles per attempt, up to `maxMs`. */
export interface DoublingDelay {
  /** The delay before the second attempt (after the first failure). */
  firstMs: number;
  /** No delay is longer than this. */
  maxMs: number;
}

/** Past this many doublings every delay is at the cap anyway; it keeps `2 **` finite (no NaN at firstMs 0). */
const MAX_DOUBLINGS = 52;

/**
 * The pause after failed attempt number `attempt` (1 for the first failure): firstMs, 2 × firstMs,
 * 4 × firstMs ... at most maxMs. Without jitter: every caller here retries one thing of its own
 * (a job, a pull, a write), not a crowd of clients against one server, and tests read the delays.
 */
export function doublingDelayMs(attempt: number, { firstMs, maxMs }: DoublingDelay): number {
  const doublings = Math.min(MAX_DOUBLINGS, Math.max(0, Math.floor(attempt) - 1));
  return Math.min(maxMs, firstMs * 2 ** doublings);
}
