import { lookup as dnsLookup } from 'node:dns';
import ky, { TimeoutError } from 'ky';
import { Agent } from 'undici';
import { checkCallbackUrl, createGuardedLookup, UnsafeUrlError, type UrlPolicy } from '@payments/url-safety';
import { parseRetryAfter } from './retry-policy';

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

export interface HttpDelivery {
  post(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome>;
  close(): Promise<void>;
}

const EXCERPT_BYTES = 1024;

/**
 * POSTs callbacks with ky: a hard timeout, no automatic retries (the schedule owns retries), success
 * on any 2xx. Under the public-only policy, connections go through a DNS lookup that refuses private
 * addresses at connect time.
 */
export function createHttpDelivery(opts: { timeoutMs: number; policy: UrlPolicy; userAgent?: string; resolve?: typeof dnsLookup }): HttpDelivery {
  const resolve = opts.resolve ?? dnsLookup;
  const agent = new Agent({
    connect: { lookup: opts.policy === 'public-only' ? createGuardedLookup(resolve) : resolve },
    keepAliveTimeout: 10_000,
    connections: 64,
  });
  const client = ky.create({
    timeout: opts.timeoutMs,
    retry: 0,
    throwHttpErrors: false,
    redirect: 'manual',
    // Node's fetch takes an undici dispatcher: ours carries the connection pool and the guarded lookup.
    fetch: (input, init) => fetch(input, { ...init, dispatcher: agent } as RequestInit),
  });

  async function post(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      checkCallbackUrl(url, opts.policy);
    } catch (err) {
      return failure(null, (err as Error).message, 0, { refused: true });
    }
    try {
      const response = await client.post(url, {
        body,
        headers: { 'content-type': 'application/json', 'user-agent': opts.userAgent ?? 'payments-callbacks/1', ...headers },
      });
      const text = await response.text().catch(() => '');
      const excerpt = text.slice(0, EXCERPT_BYTES) || null;
      const ok = response.status >= 200 && response.status < 300;
      return {
        ok,
        statusCode: response.status,
        error: ok ? null : `HTTP ${response.status}`,
        durationMs: elapsed(),
        responseExcerpt: excerpt,
        retryAfterMs: response.status === 429 || response.status === 503 ? parseRetryAfter(response.headers.get('retry-after')) : null,
        refused: false,
      };
    } catch (err) {
      if (err instanceof TimeoutError) return failure(null, `no answer within ${opts.timeoutMs} ms`, elapsed());
      const causes = causeChain(err);
      // undici re-wraps the lookup's error as a plain Error named in its message.
      const unsafe = causes.find((c) => c instanceof UnsafeUrlError || /^UnsafeUrlError: /.test((c as Error).message ?? ''));
      if (unsafe) return failure(null, (unsafe as Error).message.replace(/^UnsafeUrlError: /, ''), elapsed(), { refused: true });
      return failure(null, describeNetworkError(causes), elapsed());
    }
  }

  return { post, close: () => agent.close() };
}

function failure(statusCode: number | null, error: string, durationMs: number, extra: Partial<AttemptOutcome> = {}): AttemptOutcome {
  return { ok: false, statusCode, error, durationMs, responseExcerpt: null, retryAfterMs: null, refused: false, ...extra };
}

/** fetch wraps the real reason (ECONNREFUSED, a refused lookup...) in one or more `cause`s. */
function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = err; e && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}

function describeNetworkError(causes: unknown[]): string {
  const coded = causes.find((c) => typeof (c as { code?: unknown }).code === 'string') as { code: string; message?: string } | undefined;
  if (coded) return `${coded.code}${coded.message ? `: ${coded.message}` : ''}`;
  return (causes[causes.length - 1] as Error)?.message ?? 'network error';
}
