import type { LookupFunction } from 'node:net';
import { createHostResolver } from '@payments/host-resolver';
import { LRUCache } from 'lru-cache';
import { Agent, type Dispatcher } from 'undici';
import { checkCallbackUrl, createGuardedLookup, UnsafeUrlError, type UrlPolicy } from '@payments/url-safety';
import type { AttemptOutcome, HttpDelivery } from '../domain/http-delivery';
import { parseRetryAfter } from '../domain/retry-policy';

/** How much of an answer is read: the attempt is complete once this much has arrived. */
const EXCERPT_BYTES = 1024;
/** Parsed callback URLs kept: a tenant's callbacks mostly share one, and 10,000 distinct ones stay bounded. */
const MAX_TARGETS = 10_000;
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * POSTs callbacks with undici's request API: one deadline per attempt, no automatic retries (the
 * schedule owns retries), no redirects followed, success on any 2xx. Under the public-only policy,
 * connections go through a DNS lookup that refuses private addresses at connect time.
 *
 * The deadline (`timeoutMs`, docs/architecture.md) runs from the start until the answer is complete or its first
 * KiB has arrived; the rest of a longer answer is not read (the connection is dropped). undici's own
 * timeouts restart with every chunk, so a receiver trickling a byte a second would hold a slot for
 * ever: they stay only as a backstop. undici 7's Agent drops the pool of an origin once its last
 * connection closes (6 kept one per origin ever called), so failing hosts leave nothing behind.
 *
 * Why undici.request and not ky (the stack's default HTTP client): measured here, ky over fetch tops
 * out near 800 POSTs/s on one core, fetch near 1,300/s, undici.request near 4,900/s; the callback
 * targets (1,000 events/s with p99 < 200 ms) are out of reach with the first two.
 *
 * Receivers' names are resolved by @payments/host-resolver unless `resolve` is given: the hosts file,
 * then the nameservers (`dnsServers`, else the system's) within 2 s, off libuv's thread pool, so a
 * few names whose nameserver never answers cannot hold up the lookups of every other receiver.
 */
export function createHttpDelivery(opts: {
  timeoutMs: number;
  policy: UrlPolicy;
  userAgent?: string;
  resolve?: LookupFunction;
  dnsServers?: readonly string[];
}): HttpDelivery {
  const resolver = createHostResolver({ servers: opts.dnsServers });
  const resolve = opts.resolve ?? resolver.lookup;
  const agent = new Agent({
    connect: {
      lookup: opts.policy === 'public-only' ? createGuardedLookup(resolve) : resolve,
      timeout: opts.timeoutMs,
    },
    keepAliveTimeout: 10_000,
    connections: 64,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
  const userAgent = opts.userAgent ?? 'payments-callbacks/1';
  const closes = connectionCloses(agent);
  // Checked and parsed once per URL; the DNS check stays per connection.
  const targets = new LRUCache<string, { origin: string; path: string } | UnsafeUrlError>({ max: MAX_TARGETS });
  const targetOf = (url: string) => {
    let target = targets.get(url);
    if (!target) {
      try {
        const parsed = checkCallbackUrl(url, opts.policy);
        target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      } catch (err) {
        target = err instanceof UnsafeUrlError ? err : new UnsafeUrlError((err as Error).message);
      }
      targets.set(url, target);
    }
    return target;
  };

  async function post(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const target = targetOf(url);
    if (target instanceof UnsafeUrlError) return failure(null, target.message, 0, { refused: true });
    const deadline = AbortSignal.timeout(opts.timeoutMs);
    let status: number | null = null;
    try {
      const response = await agent.request({
        origin: target.origin,
        path: target.path,
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': userAgent, ...headers },
        signal: deadline,
      });
      status = response.statusCode;
      const text = await readExcerpt(response.body);
      const ok = status >= 200 && status < 300;
      const retryAfter = response.headers['retry-after'];
      return {
        ok,
        statusCode: status,
        error: ok ? null : `HTTP ${status}`,
        durationMs: elapsed(),
        responseExcerpt: text || null,
        retryAfterMs:
          status === 429 || status === 503 ? parseRetryAfter(typeof retryAfter === 'string' ? retryAfter : null) : null,
        refused: false,
      };
    } catch (err) {
      const causes = causeChain(err);
      // undici re-wraps the lookup's error as a plain Error named in its message.
      const unsafe = causes.find(
        (c) => c instanceof UnsafeUrlError || /^UnsafeUrlError: /.test((c as Error).message ?? ''),
      );
      if (unsafe)
        return failure(null, (unsafe as Error).message.replace(/^UnsafeUrlError: /, ''), elapsed(), { refused: true });
      if (deadline.aborted || causes.some((c) => TIMEOUT_CODES.has((c as { code?: string }).code ?? ''))) {
        // undici rejects an aborted request before its connection has closed: the attempt ends (and
        // frees the host's slot) once it has, so the receiver never sees more open than the host limit.
        if (deadline.aborted) await closes.next(target.origin);
        return status === null
          ? failure(null, `no answer within ${opts.timeoutMs} ms`, elapsed())
          : // The status line came but not the answer: a trickling receiver is not a delivery.
            failure(status, `HTTP ${status}, but the answer was not complete within ${opts.timeoutMs} ms`, elapsed());
      }
      return failure(status, describeNetworkError(causes), elapsed());
    }
  }

  return {
    post,
    async close() {
      await agent.close();
      resolver.close();
    },
  };
}

/** The longest an aborted attempt waits for its connection to close. */
const CLOSE_WAIT_MS = 1_000;

/**
 * Resolves `next(origin)` at the agent's next 'disconnect' of that origin (an aborted request's
 * connection closing), or after CLOSE_WAIT_MS at most. Waiters of one origin are served in order.
 */
function connectionCloses(agent: Agent): { next(origin: string): Promise<void> } {
  const waiting = new Map<string, Array<() => void>>();
  agent.on('disconnect', (origin: URL | string) => {
    const key = typeof origin === 'string' ? new URL(origin).origin : origin.origin;
    const queue = waiting.get(key);
    queue?.shift()?.();
    if (queue?.length === 0) waiting.delete(key);
  });
  return {
    next(origin) {
      return new Promise((resolve) => {
        const queue = waiting.get(origin) ?? [];
        waiting.set(origin, queue);
        const done = () => {
          clearTimeout(timer);
          const at = queue.indexOf(done);
          if (at >= 0) queue.splice(at, 1);
          if (queue.length === 0 && waiting.get(origin) === queue) waiting.delete(origin);
          resolve();
        };
        const timer = setTimeout(done, CLOSE_WAIT_MS);
        queue.push(done);
      });
    },
  };
}

/**
 * The answer up to its first KiB. A longer answer is cut there: the body is destroyed, which closes
 * the connection, so a huge answer costs one KiB and no waiting (a short one keeps the connection).
 */
async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of body) {
    chunks.push(chunk as Buffer);
    received += (chunk as Buffer).length;
    if (received >= EXCERPT_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
}

function failure(
  statusCode: number | null,
  error: string,
  durationMs: number,
  extra: Partial<AttemptOutcome> = {},
): AttemptOutcome {
  return {
    ok: false,
    statusCode,
    error,
    durationMs,
    responseExcerpt: null,
    retryAfterMs: null,
    refused: false,
    ...extra,
  };
}

/** fetch wraps the real reason (ECONNREFUSED, a refused lookup...) in one or more `cause`s. */
function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = err; e && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}

function describeNetworkError(causes: unknown[]): string {
  const coded = causes.find((c) => typeof (c as { code?: unknown }).code === 'string') as
    { code: string; message?: string } | undefined;
  if (coded) return `${coded.code}${coded.message ? `: ${coded.message}` : ''}`;
  return (causes[causes.length - 1] as Error)?.message ?? 'network error';
}
