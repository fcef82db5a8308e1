import { lookup } from 'node:dns';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpDelivery } from '../src/transport/undici-http-delivery';

// A resolver that says erp.example.test is this machine, as a DNS rebinding attack would.
const rebinding = ((host: string, options: object, cb: (...args: unknown[]) => void) =>
  host === 'erp.example.test'
    ? lookup('127.0.0.1', options, cb as never)
    : lookup(host, options, cb as never)) as unknown as typeof lookup;

let server: Server;
let port = 0;
let hits = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    hits += 1;
    if (req.url === '/slow') return; // never answers
    if (req.url === '/trickle') return trickle(res);
    if (req.url === '/huge') return huge(res);
    if (req.url === '/late') return void setTimeout(() => res.end('ok'), 700);
    res.writeHead(req.url === '/busy' ? 503 : 200, req.url === '/busy' ? { 'retry-after': '7' } : {});
    res.end('x'.repeat(5000));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

/** 200 at once, then a byte every 50 ms, never ending. */
function trickle(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/plain' });
  const timer = setInterval(() => res.write('.'), 50);
  res.on('close', () => clearInterval(timer));
}

/** 200 and 64 MiB, written as fast as the client reads; records how much went out before the client left. */
let hugeWritten = 0;
let hugeClosed: Promise<void> = Promise.resolve();
function huge(res: ServerResponse): void {
  hugeWritten = 0;
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(64 * 2 ** 20) });
  const chunk = Buffer.alloc(64 * 1024, 'y');
  hugeClosed = new Promise((resolve) => res.on('close', () => resolve()));
  const pump = () => {
    while (hugeWritten < 64 * 2 ** 20 && !res.destroyed) {
      hugeWritten += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
}

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

it('production policy refuses at connect time a name that resolves to loopback', async () => {
  const delivery = createHttpDelivery({ timeoutMs: 1000, policy: 'public-only', resolve: rebinding });
  const before = hits;
  const outcome = await delivery.post(`http://erp.example.test:${port}/hook`, '{}', {});
  await delivery.close();
  expect(outcome).toMatchObject({ ok: false, refused: true, statusCode: null });
  expect(outcome.error).toBe('the host does not resolve to a public address, which callbacks require in production');
  expect(hits).toBe(before);
});

it('production policy refuses a literal non-public address before connecting, naming its range', async () => {
  const delivery = createHttpDelivery({ timeoutMs: 1000, policy: 'public-only' });
  const before = hits;
  const loopback = await delivery.post(`http://[::127.0.0.1]:${port}/hook`, '{}', {});
  const siteLocal = await delivery.post(`http://[fec0::1]:${port}/hook`, '{}', {});
  await delivery.close();
  expect(loopback).toMatchObject({ ok: false, refused: true, statusCode: null, durationMs: 0 });
  expect(loopback.error).toMatch(/must not point to a loopback address/);
  expect(siteLocal).toMatchObject({ ok: false, refused: true, statusCode: null });
  expect(siteLocal.error).toMatch(/must not point to a deprecatedSiteLocal address/);
  expect(hits).toBe(before);
});

it('development policy lets the same name through', async () => {
  const delivery = createHttpDelivery({ timeoutMs: 1000, policy: 'allow-private', resolve: rebinding });
  const outcome = await delivery.post(`http://erp.example.test:${port}/hook`, '{}', {});
  await delivery.close();
  expect(outcome).toMatchObject({ ok: true, statusCode: 200, refused: false });
  expect(outcome.responseExcerpt).toHaveLength(1024);
});

it('reports a timeout, a 503 with its Retry-After, and a refused connection', async () => {
  const delivery = createHttpDelivery({ timeoutMs: 200, policy: 'allow-private' });
  const slow = await delivery.post(`http://127.0.0.1:${port}/slow`, '{}', {});
  expect(slow).toMatchObject({ ok: false, statusCode: null, error: 'no answer within 200 ms' });
  const busy = await delivery.post(`http://127.0.0.1:${port}/busy`, '{}', {});
  expect(busy).toMatchObject({ ok: false, statusCode: 503, retryAfterMs: 7000 });
  const spare = createServer();
  await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
  const closedPort = (spare.address() as AddressInfo).port;
  await new Promise((r) => spare.close(r));
  const closed = await delivery.post(`http://127.0.0.1:${closedPort}/hook`, '{}', {});
  expect(closed).toMatchObject({ ok: false, statusCode: null });
  expect(closed.error).toMatch(/ECONNREFUSED/);
  await delivery.close();
});

describe('one deadline per attempt, until the answer is complete or its first KiB is in', () => {
  it('fails a receiver that answers 200 and then trickles its body, at the deadline', async () => {
    const delivery = createHttpDelivery({ timeoutMs: 500, policy: 'allow-private' });
    const started = Date.now();
    const outcome = await delivery.post(`http://127.0.0.1:${port}/trickle`, '{}', {});
    const took = Date.now() - started;
    await delivery.close();
    // Each byte comes within undici's per-chunk timeouts: only the single deadline ends it.
    expect(outcome).toMatchObject({ ok: false, statusCode: 200 });
    expect(outcome.error).toBe('HTTP 200, but the answer was not complete within 500 ms');
    expect(took).toBeGreaterThanOrEqual(480);
    expect(took).toBeLessThan(1500);
  });

  it('fails an answer that comes after the deadline', async () => {
    const delivery = createHttpDelivery({ timeoutMs: 500, policy: 'allow-private' });
    const outcome = await delivery.post(`http://127.0.0.1:${port}/late`, '{}', {});
    await delivery.close();
    expect(outcome).toMatchObject({ ok: false, statusCode: null, error: 'no answer within 500 ms' });
  });

  it('delivers to a receiver answering 200 with a huge body without reading it all', async () => {
    const delivery = createHttpDelivery({ timeoutMs: 5000, policy: 'allow-private' });
    const started = Date.now();
    const outcome = await delivery.post(`http://127.0.0.1:${port}/huge`, '{}', {});
    const took = Date.now() - started;
    await hugeClosed;
    await delivery.close();
    expect(outcome).toMatchObject({ ok: true, statusCode: 200, error: null });
    expect(outcome.responseExcerpt).toBe('y'.repeat(1024));
    expect(took).toBeLessThan(2000);
    // The connection was dropped after the first KiB: far from the 64 MiB (socket buffers hold a few MiB at most).
    expect(hugeWritten).toBeLessThan(16 * 2 ** 20);
  });
});
