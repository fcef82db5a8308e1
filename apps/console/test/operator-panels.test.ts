import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startConsole, type ConsoleUnderTest } from './support/console-under-test';
import { SessionStandIn } from './support/session-stand-in';

/**
 * The operator pages against a stand-in admin API on a local port: the dashboard when one service
 * does not answer (its panel says so, the page is drawn), and the dead letters' discard, which
 * takes a ticked confirmation.
 */
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let gateway: Server;
let routes: Record<string, Handler>;
let console_: ConsoleUnderTest;
let base: string;
let cookie: string;

function json(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type });
  res.end(JSON.stringify(body));
}

const series = (n: number, bucket: Record<string, number | null>) =>
  Array.from({ length: n }, (_, i) => ({ at: new Date(Date.UTC(2026, 10, 28, 12, i)).toISOString(), ...bucket }));
const window = { window: 'hour', bucket_seconds: 60, from: '2026-11-28T12:00:00.000Z', to: '2026-11-28T13:00:00.000Z' };
const deliveries: Handler = (_req, res) =>
  json(res, 200, {
    ...window,
    series: series(60, {
      delivered: 1,
      failed: 0,
      dead: 0,
      p50_ms: 40,
      p99_ms: 90,
      end_to_end_p50_ms: 900,
      end_to_end_p99_ms: 4000,
    }),
  });
const registrations: Handler = (_req, res) =>
  json(res, 200, { ...window, series: series(60, { registered: 2, failed: 0 }) });
const tenants: Handler = (_req, res) => json(res, 200, { items: [] });
const unavailable: Handler = (_req, res) =>
  json(
    res,
    503,
    { title: 'Service Unavailable', status: 503, code: 'service_unavailable', detail: 'callback-svc did not answer' },
    'application/problem+json',
  );

beforeAll(async () => {
  gateway = createServer((req, res) => {
    const route = routes[`${req.method} ${req.url?.split('?')[0]}`];
    if (route) return route(req, res);
    json(res, 404, { title: 'Not Found', status: 404, detail: 'no such thing' }, 'application/problem+json');
  });
  await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
  console_ = await startConsole(`http://127.0.0.1:${(gateway.address() as AddressInfo).port}`);
  base = console_.url;
});

beforeEach(async () => {
  routes = { ...new SessionStandIn('7f0c1a52-0000-4000-8000-000000000001').routes() };
  const signedIn = await post('/login/operator', { credential: 'opk_good_operator' }, {});
  expect(signedIn.status).toBe(302);
  cookie = (signedIn.headers.getSetCookie().find((c) => c.startsWith('console_session=')) ?? '').split(';')[0] ?? '';
});

afterAll(async () => {
  gateway.closeAllConnections();
  await console_.close();
  await new Promise((r) => gateway.close(r));
});

function post(path: string, form: Record<string, string>, headers: Record<string, string> = { cookie }) {
  return fetch(`${base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base, ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

const open = (path: string) => fetch(`${base}${path}`, { headers: { cookie }, redirect: 'manual' });

it('draws the dashboard when callback-svc does not answer: that panel says so, the others are there', async () => {
  routes['GET /admin/v1/stats/deliveries'] = unavailable;
  routes['GET /admin/v1/stats/registrations'] = registrations;
  routes['GET /admin/v1/tenants'] = tenants;
  const res = await open('/operator/dashboard');
  const html = await res.text();
  expect(res.status).toBe(200);
  expect(html).toContain('Estatísticas de entrega (callback-svc): indisponível agora.');
  expect(html).toContain('callback-svc did not answer');
  expect(html).toContain('id="registrations-hour"');
  expect(html).not.toContain('id="deliveries-hour"');
});

it('draws the dashboard when the registrations do not answer at all, and all of it when all answer', async () => {
  routes['GET /admin/v1/stats/deliveries'] = deliveries;
  // No answer: the connection is dropped.
  routes['GET /admin/v1/stats/registrations'] = (req) => req.socket.destroy();
  routes['GET /admin/v1/tenants'] = tenants;
  const res = await open('/operator/dashboard');
  const html = await res.text();
  expect(res.status).toBe(200);
  expect(html).toContain('data-panel="registrations"');
  expect(html).toContain('id="end-to-end-hour"');
  expect(html).toContain('id="latency-hour"');

  routes['GET /admin/v1/stats/registrations'] = registrations;
  const whole = await (await open('/operator/dashboard')).text();
  expect(whole).not.toContain('indisponível');
  expect(whole).toContain('id="registrations-hour"');
});

it('still ends the session when the admin API refuses the operator on a panel (401)', async () => {
  routes['GET /admin/v1/stats/deliveries'] = (_req, res) =>
    json(res, 401, { title: 'Unauthorized', status: 401, code: 'unauthorized' }, 'application/problem+json');
  routes['GET /admin/v1/stats/registrations'] = registrations;
  routes['GET /admin/v1/tenants'] = tenants;
  const res = await open('/operator/dashboard');
  await res.text();
  expect(res.status).not.toBe(200);
});

it('discards a dead letter only with the confirmation ticked', async () => {
  let discarded = 0;
  routes['POST /admin/v1/dead-letters/41/discard'] = (_req, res) => {
    discarded += 1;
    json(res, 200, { id: 41, discarded: true });
  };
  const unconfirmed = await post('/operator/dead-letters/41/discard', {});
  expect(unconfirmed.status).toBe(400);
  await unconfirmed.text();
  expect(discarded).toBe(0);
  const confirmed = await post('/operator/dead-letters/41/discard', { confirm: 'yes' });
  expect(confirmed.status).toBe(302);
  expect(confirmed.headers.get('location')).toBe('/operator/dead-letters');
  expect(discarded).toBe(1);
});
