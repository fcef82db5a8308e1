import { PaymentsRequestError } from './errors';

/**
 * Statuses that say the request did not run or the way to the service failed: rate limit (429), a
 * bad or missing upstream (502, 504), a busy or stopped service (503).
 */
const RETRY_STATUSES = new Set([429, 502, 503, 504]);

/** Methods RFC 9110 calls idempotent: sending one twice has the effect of sending it once. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

export interface RetryOptions {
  /** Attempts in all, the first included (default 4). 1 turns retrying off. */
  maxAttempts?: number;
  /** Longest wait: caps the back-off, and a Retry-After above it ends the retries with that answer (default 30 s). */
  maxDelayMs?: number;
  /** Back-off ceiling of the first retry, doubled per attempt; the wait is a random fraction of it (default 500 ms). */
  baseDelayMs?: number;
  /** For tests: how to wait. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** For tests: a number in [0, 1) that picks the jittered wait (default Math.random). */
  random?: () => number;
}

export interface TransportOptions extends RetryOptions {
  /** Each attempt is abandoned after this long (default 30 s); the caller's own signal bounds the whole call. */
  timeoutMs?: number;
  /**
   * Whether the request may be sent again without being run twice. Default: idempotent methods, and
   * any request carrying an Idempotency-Key (the gateway runs a key at most once).
   */
  isRepeatable?: (request: Request) => boolean;
}

export type FetchFunction = (input: Request) => Promise<Response>;

/**
 * A fetch that sends a repeatable request again after a network error, an attempt timeout, or a 429,
 * 502, 503 or 504: after the Retry-After the gateway asked for, or else after a random wait of up to
 * the back-off ceiling (full jitter, so clients that failed together do not come back together). The
 * request is replayed byte for byte, so its Idempotency-Key stays the same.
 */
export function retryingFetch(options: TransportOptions = {}, inner: FetchFunction = (r) => fetch(r)): FetchFunction {
  const settings = settingsOf(options);
  return async (request) => {
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= settings.maxAttempts || !settings.isRepeatable(request);
      const outcome = await attemptOnce(inner, request, settings.timeoutMs);
      if (outcome.response && (last || !RETRY_STATUSES.has(outcome.response.status))) return outcome.response;
      if (!outcome.response && (last || request.signal.aborted)) throw failure(request, outcome, attempt);
      const delayMs = waitBefore(attempt + 1, outcome.response, settings);
      if (delayMs === undefined && outcome.response) return outcome.response;
      await outcome.response?.body?.cancel();
      await settings.sleep(delayMs ?? 0, request.signal);
      if (request.signal.aborted) throw failure(request, { cause: request.signal.reason, timedOut: false }, attempt);
    }
  };
}

type Settings = Required<Omit<TransportOptions, 'sleep'>> & {
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
};

function settingsOf(options: TransportOptions): Settings {
  return {
    maxAttempts: Math.max(1, options.maxAttempts ?? 4),
    maxDelayMs: options.maxDelayMs ?? 30_000,
    baseDelayMs: options.baseDelayMs ?? 500,
    timeoutMs: options.timeoutMs ?? 30_000,
    sleep: options.sleep ?? abortableSleep,
    random: options.random ?? Math.random,
    isRepeatable: options.isRepeatable ?? isRepeatableByDefault,
  };
}

export function isRepeatableByDefault(request: Request): boolean {
  return IDEMPOTENT_METHODS.has(request.method) || request.headers.has('idempotency-key');
}

interface Outcome {
  response?: Response;
  cause?: unknown;
  timedOut?: boolean;
}

/** One send of a copy of the request, abandoned after timeoutMs or when the caller's signal aborts. */
async function attemptOnce(inner: FetchFunction, request: Request, timeoutMs: number): Promise<Outcome> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([request.signal, timeout]);
  try {
    // The body can be read once: every attempt sends a copy.
    return { response: await inner(new Request(request.clone(), { signal })) };
  } catch (cause) {
    return { cause, timedOut: timeout.aborted && !request.signal.aborted };
  }
}

/** The wait before attempt `next`: Retry-After when the answer has one, else full jitter; undefined to stop. */
function waitBefore(next: number, response: Response | undefined, settings: Settings): number | undefined {
  const asked = response ? retryAfterMs(response.headers.get('retry-after')) : undefined;
  if (asked !== undefined) return asked > settings.maxDelayMs ? undefined : asked;
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (next - 2));
  return Math.floor(settings.random() * ceiling);
}

function failure(request: Request, outcome: Outcome, attempts: number): PaymentsRequestError {
  const operation = `${request.method} ${new URL(request.url).pathname}`;
  return new PaymentsRequestError(operation, attempts, outcome.timedOut === true, request.signal.aborted, {
    cause: outcome.cause,
  });
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Retry-After in milliseconds: delta-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
