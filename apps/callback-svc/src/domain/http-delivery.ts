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
