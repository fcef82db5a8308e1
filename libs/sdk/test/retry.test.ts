import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PaymentsApiError, PaymentsClient, PaymentsRequestError } from '../src';
import { retryAfterMs, retryingFetch, type TransportOptions } from '../src/retry';

/*
 * The retry and timeout rules against a real HTTP server on a local port: each path answers from a
 * script (a status with headers, a connection cut, or no answer at all), and the server records what
 * arrived and when. The oracle is the server's record, not the SDK's.
 */

type Action = 'cut' | 'hang' | { status: number; headers?: Record<string, string>; body?: string };

interface Arrival {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  body: string;
  at: number;
}

let server: Server;
let origin: string;
let scripts = new Map<string, Action[]>();
let arrivals: Arrival[] = [];
const hanging: ServerResponse[] = [];

function handle(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const path = new URL(req.url ?? '/', origin).pathname;
    const seen = arrivals.filter((a) => a.path === path).length;
    arrivals.push({
      method: req.method ?? '',
      path,
      idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      body: Buffer.concat(chunks).toString('utf8'),
      at: Date.now(),
    });
    const script = scripts.get(path) ?? [{ status: 404 }];
    const action = script[Math.min(seen, script.length - 1)] ?? { status: 404 };
    if (action === 'cut') return void req.socket.destroy();
    if (action === 'hang') return void hanging.push(res);
    res.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
    res.end(action.body ?? '{}');
  });
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  scripts = new Map();
  arrivals = [];
});

const at = (path: string) => arrivals.filter((a) => a.path === path);
const gaps = (path: string) =>
  at(path)
    .slice(1)
    .map((a, i) => a.at - (at(path)[i]?.at ?? 0));

function send(path: string, init: RequestInit, options: TransportOptions = {}) {
  return retryingFetch({ baseDelayMs: 20, ...options })(new Request(`${origin}${path}`, init));
}

const keyed = (key: string): RequestInit => ({
  method: 'POST',
  headers: { 'idempotency-key': key, 'content-type': 'application/json' },
  body: '[{"a":1}]',
});

describe('retryAfterMs', () => {
  it('reads delta-seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2026-11-26T12:00:00Z');
    expect(retryAfterMs('5', now)).toBe(5000);
    expect(retryAfterMs('Thu, 26 Nov 2026 12:00:03 GMT', now)).toBe(3000);
    expect(retryAfterMs('Thu, 26 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });
});

describe('retryingFetch against a local server', () => {
  it('sends a keyed POST again after 502, 504 and a 503 with Retry-After, the same bytes each time', async () => {
    scripts.set('/a', [
      { status: 502 },
      { status: 504 },
      { status: 503, headers: { 'retry-after': '1' } },
      { status: 201 },
    ]);
    expect((await send('/a', keyed('k-1'))).status).toBe(201);
    expect(at('/a').map((a) => [a.idempotencyKey, a.body])).toEqual(Array(4).fill(['k-1', '[{"a":1}]']));
    expect(gaps('/a')[2]).toBeGreaterThanOrEqual(990);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const inTwoSeconds = new Date(Date.now() + 2000).toUTCString(); // whole seconds: 1 to 2 s from now
    scripts.set('/b', [{ status: 429, headers: { 'retry-after': inTwoSeconds } }, { status: 200 }]);
    expect((await send('/b', { method: 'GET' })).status).toBe(200);
    expect(at('/b')[1]?.at).toBeGreaterThanOrEqual(Date.parse(inTwoSeconds) - 5); // not before the date
  });

  it('waits a random fraction of a doubling ceiling (full jitter), and stops after maxAttempts', async () => {
    scripts.set('/c', [{ status: 503 }]);
    const answer = await send('/c', { method: 'GET' }, { maxAttempts: 3, baseDelayMs: 400, random: () => 0.75 });
    expect(answer.status).toBe(503);
    const [first, second] = gaps('/c');
    expect(at('/c')).toHaveLength(3);
    expect(first).toBeGreaterThanOrEqual(295); // 0.75 of 400
    expect(first).toBeLessThan(595); // not yet the doubled ceiling
    expect(second).toBeGreaterThanOrEqual(595); // 0.75 of 800
  });

  it('never waits with random() at 0, and gives a Retry-After above maxDelayMs back at once', async () => {
    scripts.set('/d', [{ status: 502 }, { status: 200 }]);
    const started = Date.now();
    expect((await send('/d', { method: 'GET' }, { baseDelayMs: 5000, random: () => 0 })).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);

    scripts.set('/e', [{ status: 429, headers: { 'retry-after': '120' } }]);
    expect((await send('/e', { method: 'GET' }, { maxDelayMs: 30_000 })).status).toBe(429);
    expect(at('/e')).toHaveLength(1);
  });

  it('does not repeat a POST without an Idempotency-Key, nor a 500', async () => {
    scripts.set('/f', [{ status: 503 }, { status: 201 }]);
    expect((await send('/f', { method: 'POST', body: '[]' })).status).toBe(503);
    expect(at('/f')).toHaveLength(1);

    scripts.set('/g', [{ status: 500 }, { status: 200 }]);
    expect((await send('/g', { method: 'GET' })).status).toBe(500);
    expect(at('/g')).toHaveLength(1);
  });

  it('retries a cut connection when repeatable, and reports one that is not', async () => {
    scripts.set('/h', ['cut', 'cut', { status: 200 }]);
    expect((await send('/h', { method: 'GET' })).status).toBe(200);
    expect(at('/h')).toHaveLength(3);

    scripts.set('/i', ['cut', { status: 201 }]);
    const err = await send('/i', { method: 'POST', body: '[]' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentsRequestError);
    expect(err).toMatchObject({ operation: 'POST /i', attempts: 1, timedOut: false, aborted: false });
    expect(at('/i')).toHaveLength(1);
  });

  it('abandons an attempt after timeoutMs and sends it again', async () => {
    scripts.set('/j', ['hang', { status: 200 }]);
    const started = Date.now();
    expect((await send('/j', { method: 'GET' }, { timeoutMs: 300 })).status).toBe(200);
    expect(at('/j')).toHaveLength(2);
    // The first attempt was given up 300 ms after the call began, before the second was sent.
    expect((at('/j')[1]?.at ?? 0) - started).toBeGreaterThanOrEqual(295);
    expect(Date.now() - started).toBeLessThan(3000);

    scripts.set('/k', ['hang']);
    const err = await send('/k', { method: 'GET' }, { timeoutMs: 200, maxAttempts: 2 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'PaymentsRequestError', attempts: 2, timedOut: true, aborted: false });
    expect(at('/k')).toHaveLength(2);
  });

  it("stops at the caller's signal, retries included", async () => {
    scripts.set('/l', ['hang']);
    const started = Date.now();
    const err = await send('/l', { method: 'GET', signal: AbortSignal.timeout(500) }, { timeoutMs: 200 }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: 'PaymentsRequestError', aborted: true });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(at('/l').length).toBeLessThan(4);
  });
});

describe('PaymentsClient against a local server', () => {
  const jwt = (lifetime: number) => {
    const iat = Math.floor(Date.now() / 1000);
    const claims = Buffer.from(JSON.stringify({ iat, exp: iat + lifetime })).toString('base64url');
    return `e30.${claims}.sig`;
  };
  const authenticated = () =>
    scripts.set('/api/v1/authenticate', [
      { status: 200, body: JSON.stringify({ access_token: jwt(3600), token_type: 'Bearer', expires_in: 3600 }) },
    ]);
  const client = () =>
    new PaymentsClient({ baseUrl: origin, integrationToken: 'itk_x', retry: { baseDelayMs: 20 }, timeoutMs: 2000 });

  it('sends no Idempotency-Key on search and consult, retries them, and keys a create', async () => {
    authenticated();
    scripts.set('/api/v1/accounts-receivable/search', [{ status: 502 }, { status: 200, body: '[]' }]);
    scripts.set('/api/v1/accounts-receivable/0b6f2c1e-7d4a-4f1b-9c3e-5a8d2f6b1c71/consult-transaction', [
      { status: 504 },
      { status: 200, body: '{}' },
    ]);
    scripts.set('/api/v1/clients', [{ status: 201, body: '{"message":"ok"}' }]);
    const payments = client();
    const found: unknown[] = [];
    for await (const item of payments.searchReceivables({
      state: 'all',
      start_date: '2026-11-01',
      end_date: '2026-11-30',
    }))
      found.push(item);
    await payments.api.POST('/api/v1/accounts-receivable/{uuid}/consult-transaction', {
      params: { path: { uuid: '0b6f2c1e-7d4a-4f1b-9c3e-5a8d2f6b1c71' } },
    });
    await payments.api.POST('/api/v1/clients', { body: [] });
    const keys = (suffix: string) => arrivals.filter((a) => a.path.endsWith(suffix)).map((a) => a.idempotencyKey);
    expect(keys('/search')).toEqual([undefined, undefined]);
    expect(keys('/consult-transaction')).toEqual([undefined, undefined]);
    expect(keys('/clients')).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/)]);
  });

  it('puts the X-Request-Id of the answer on its errors', async () => {
    scripts.set('/api/v1/authenticate', [
      {
        status: 401,
        headers: { 'content-type': 'application/problem+json', 'x-request-id': 'req-from-header' },
        body: JSON.stringify({ status: 401, code: 'unauthorized', request_id: 'req-from-body' }),
      },
    ]);
    const err = await client()
      .tokens.accessToken()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentsApiError);
    expect(err).toMatchObject({ status: 401, requestId: 'req-from-header' });
    expect(String((err as Error).message)).toContain('req-from-header');
  });

  it('takes a per-request signal as the timeout of one call', async () => {
    authenticated();
    scripts.set('/api/v1/callbacks', ['hang']);
    const started = Date.now();
    const err = await client()
      .api.GET('/api/v1/callbacks', { signal: AbortSignal.timeout(400) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'PaymentsRequestError', aborted: true });
    expect(Date.now() - started).toBeLessThan(1900); // before the client's 2 s attempt timeout
  });
});
