/** Statuses that ask the caller to come back later (rate limit, busy or unreachable service). */
const RETRY_STATUSES = new Set([429, 503]);

export interface RetryOptions {
  /** Attempts in all, the first included (default 4). 1 turns retrying off. */
  maxAttempts?: number;
  /** Longest wait honoured; a Retry-After above it ends the retries with that answer (default 30 s). */
  maxDelayMs?: number;
  /** Wait when the answer has no usable Retry-After: this, doubled per attempt (default 500 ms). */
  baseDelayMs?: number;
  /** For tests: how to wait. */
  sleep?: (ms: number) => Promise<void>;
}

export type FetchFunction = (input: Request) => Promise<Response>;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A fetch that sends the same request again on 429 and 503, after the Retry-After the gateway asked
 * for. The request is replayed byte for byte, so its Idempotency-Key stays the same: the gateway runs
 * it at most once.
 */
export function retryingFetch(options: RetryOptions = {}, inner: FetchFunction = (r) => fetch(r)): FetchFunction {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const sleep = options.sleep ?? defaultSleep;
  return async (request) => {
    for (let attempt = 1; ; attempt++) {
      // The body can be read once: every attempt sends a copy, the last one the original.
      const response = await inner(attempt < maxAttempts ? request.clone() : request);
      if (!RETRY_STATUSES.has(response.status) || attempt >= maxAttempts) return response;
      const delayMs = retryAfterMs(response.headers.get('retry-after')) ?? baseDelayMs * 2 ** (attempt - 1);
      if (delayMs > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(delayMs);
    }
  };
}

/** Retry-After in milliseconds: delta-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
