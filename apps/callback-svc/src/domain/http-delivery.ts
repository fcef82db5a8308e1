import { MAX_RESPONSE_EXCERPT } from '@payments/contracts';

/** What one HTTP attempt came to. `statusCode` is null when no HTTP answer came. */
export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string | null;
  retryAfterMs: number | null;
  /** The URL itself is refused (SSRF rules): retrying cannot help. */
  refused: boolean;
}

/**
 * The engine's view of HTTP: a port, so that the domain knows no HTTP client (the transport layer
 * implements it with undici, in transport/undici-http-delivery.ts).
 */
export interface HttpDelivery {
  /** POSTs one signed callback; never throws, a network failure is an outcome too. */
  post(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome>;
  close(): Promise<void>;
}

/**
 * A receiver's answer as an attempt keeps it: at most MAX_RESPONSE_EXCERPT characters (whatever the
 * HttpDelivery read) and storable as Postgres text, which refuses U+0000: one NUL in an answer would
 * fail the write of its whole batch, tried again for ever. Empty: null.
 */
export function storableExcerpt(text: string | null): string | null {
  if (!text) return null;
  let kept = text.replaceAll('\u0000', '\uFFFD');
  if (kept.length > MAX_RESPONSE_EXCERPT) {
    kept = kept.slice(0, MAX_RESPONSE_EXCERPT);
    // Not half a surrogate pair at the cut.
    if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
  }
  return kept;
}
