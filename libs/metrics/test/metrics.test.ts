import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { createMetricsRegistry, httpMetrics, metricsHandler, MetricNames, scrapedGauge, type Registry } from '../src';

/** The value of one series in Prometheus text, found by its labels in any order. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('http metrics on a real server', () => {
  let registry: Registry;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    registry = createMetricsRegistry('test-app');
    const app = new Koa();
    app.use(httpMetrics(registry));
    const router = new Router();
    router.get('/items/:id', (ctx) => {
      ctx.body = { id: ctx.params.id };
    });
    router.get('/boom', () => {
      throw Object.assign(new Error('teapot'), { status: 418, expose: true });
    });
    router.get('/metrics', metricsHandler(registry));
    app.use(router.routes());
    app.silent = true;
    server = createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('counts requests by route template, method and status, and serves Prometheus text', async () => {
    await fetch(`${url}/items/1`);
    await fetch(`${url}/items/2`);
    await fetch(`${url}/boom`);
    await fetch(`${url}/no/such/path`);
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(
      sample(text, MetricNames.httpRequests, {
        method: 'GET',
        route: '/items/:id',
        status: '200',
        service: 'test-app',
      }),
    ).toBe(2);
    expect(sample(text, MetricNames.httpRequests, { route: '/boom', status: '418' })).toBe(1);
    expect(sample(text, MetricNames.httpRequests, { route: 'unmatched', status: '404' })).toBe(1);
    // Raw paths never become labels.
    expect(text).not.toContain('/items/1');
    expect(sample(text, `${MetricNames.httpRequestDuration}_count`, { route: '/items/:id', status: '200' })).toBe(2);
    // Default process metrics are there too.
    expect(text).toContain('process_cpu_user_seconds_total');
  });
});

describe('scrapedGauge', () => {
  it('reads at scrape time, reuses a read within its ttl, and shows nothing while reads fail', async () => {
    const registry = createMetricsRegistry('gauge-test');
    let reads = 0;
    let failing = false;
    const errors: unknown[] = [];
    scrapedGauge(registry, {
      name: 'things_by_state',
      help: 'things',
      labelNames: ['state'],
      ttlMs: 100,
      read: async () => {
        reads += 1;
        if (failing) throw new Error('postgres away');
        return [{ labels: { state: 'open' }, value: reads }];
      },
      onError: (err) => errors.push(err),
    });
    const [a, b] = await Promise.all([registry.metrics(), registry.metrics()]);
    expect(reads).toBe(1);
    expect(sample(a, 'things_by_state', { state: 'open' })).toBe(1);
    expect(sample(b, 'things_by_state', { state: 'open' })).toBe(1);
    await registry.metrics();
    expect(reads).toBe(1);

    await new Promise((r) => setTimeout(r, 120));
    failing = true;
    expect(sample(await registry.metrics(), 'things_by_state', { state: 'open' })).toBeUndefined();
    expect(errors).toHaveLength(1);

    await new Promise((r) => setTimeout(r, 120));
    failing = false;
    expect(sample(await registry.metrics(), 'things_by_state', { state: 'open' })).toBe(3);
  });
});
