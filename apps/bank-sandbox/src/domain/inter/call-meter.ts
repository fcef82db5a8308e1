/** The endpoints Inter limits one by one, with their production limits (calls a minute). */
export const INTER_ENDPOINT_LIMITS = {
  token: 5,
  create: 120,
  list: 120,
  consult: 120,
  summary: 120,
  pdf: 120,
  cancel: 120,
  edit: 10,
  webhook_put: 5,
  webhook_get: 5,
  webhook_delete: 5,
  callbacks: 10,
  callbacks_retry: 5,
  pay: 10,
  // The PIX API (both dialects): Inter's API Pix reference gives 120 a minute for cobv and 10 for the
  // webhook; the received PIX and devoluções are taken as 120 too.
  cobv_put: 120,
  cobv_patch: 120,
  cobv_get: 120,
  cobv_list: 120,
  pix_webhook_put: 10,
  pix_webhook_get: 10,
  pix_webhook_delete: 10,
  pix_list: 120,
  pix_get: 120,
  refund_put: 120,
  refund_get: 120,
} as const;
export type InterEndpoint = keyof typeof INTER_ENDPOINT_LIMITS;

const MINUTE_MS = 60_000;

interface EndpointCalls {
  total: number;
  /** Times of calls in the last minute (all of them, answered or refused). */
  recent: number[];
  /** Times of the calls answered (not refused with 429) in the last minute: what the limit counts. */
  admitted: number[];
  maxPerMinute: number;
  refused: number;
}

/** The answer to one call: admitted, or refused with the seconds until a call would be admitted. */
export type Admission = { admitted: true } | { admitted: false; retryAfterSeconds: number; limit: number };

/**
 * Calls per integration and endpoint, in sliding one-minute windows: it admits or refuses each call
 * against the limit in force, and keeps the most calls seen within any minute, so a test or a bench
 * can check that our service kept within Inter's published limits. In memory (the sandbox is one process).
 */
export class CallMeter {
  private readonly calls = new Map<string, Map<InterEndpoint, EndpointCalls>>();

  /** Counts a call; refused when `limit` calls were already admitted within the last minute. */
  admit(clientId: string, endpoint: InterEndpoint, limit: number | null, now: number = Date.now()): Admission {
    const calls = this.entry(clientId, endpoint);
    const since = now - MINUTE_MS;
    calls.recent = calls.recent.filter((t) => t > since);
    calls.admitted = calls.admitted.filter((t) => t > since);
    calls.total += 1;
    calls.recent.push(now);
    calls.maxPerMinute = Math.max(calls.maxPerMinute, calls.recent.length);
    if (limit !== null && calls.admitted.length >= limit) {
      calls.refused += 1;
      const retryAfterSeconds = Math.max(1, Math.ceil((calls.admitted[0] + MINUTE_MS - now) / 1000));
      return { admitted: false, retryAfterSeconds, limit };
    }
    calls.admitted.push(now);
    return { admitted: true };
  }

  /** GET /sandbox/inter/calls: per endpoint, the calls so far, the most within a minute, those refused. */
  report(clientId: string, now: number = Date.now()) {
    const endpoints: Record<string, unknown> = {};
    for (const [endpoint, calls] of this.calls.get(clientId) ?? []) {
      endpoints[endpoint] = {
        total: calls.total,
        last_minute: calls.recent.filter((t) => t > now - MINUTE_MS).length,
        max_per_minute: calls.maxPerMinute,
        refused: calls.refused,
        inter_limit_per_minute: INTER_ENDPOINT_LIMITS[endpoint],
      };
    }
    return { client_id: clientId, endpoints };
  }

  private entry(clientId: string, endpoint: InterEndpoint): EndpointCalls {
    let byEndpoint = this.calls.get(clientId);
    if (!byEndpoint) this.calls.set(clientId, (byEndpoint = new Map()));
    let calls = byEndpoint.get(endpoint);
    if (!calls) byEndpoint.set(endpoint, (calls = { total: 0, recent: [], admitted: [], maxPerMinute: 0, refused: 0 }));
    return calls;
  }
}
