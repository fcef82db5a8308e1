/**
 * When to try again after a failed delivery: the configured schedule (delays after the previous
 * attempt), each delay spread by +/- jitterPercent so that a burst of failures does not retry in lockstep,
 * and never sooner than the receiver's Retry-After. After the last delay, the event is dead.
 */
export interface RetryPolicy {
  /**
   * Delay before retry n+1 after the n-th failure, in ms (CALLBACK_RETRY_SCHEDULE_MS). docs/api.md,
   * Callbacks: 5 s, 30 s, 2 min ... 24 h.
   */
  readonly scheduleMs: readonly number[];
  /** Percent of each delay to spread by, e.g. 20 for +/- 20 % (CALLBACK_RETRY_JITTER_PERCENT). */
  readonly jitterPercent: number;
}

export const DEFAULT_SCHEDULE_MS = [
  5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
];
const MAX_RETRY_AFTER_MS = 86_400_000;

/** Delay before the next attempt after `failures` failures in this run, or null when none is left. */
export function nextRetryDelay(
  policy: RetryPolicy,
  failures: number,
  retryAfterMs: number | null = null,
  random: () => number = Math.random,
): number | null {
  if (failures < 1 || failures > policy.scheduleMs.length) return null;
  const base = policy.scheduleMs[failures - 1];
  const spread = (base * policy.jitterPercent) / 100;
  const delay = Math.round(base - spread + 2 * spread * random());
  return retryAfterMs === null ? delay : Math.max(delay, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** Retry-After is seconds or an HTTP date; anything else is ignored. */
export function parseRetryAfter(header: string | null, now: Date = new Date()): number | null {
  if (!header) return null;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now.getTime());
}
