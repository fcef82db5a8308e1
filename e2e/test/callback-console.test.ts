import { randomUUID } from 'node:crypto';
import type {
  CallbackEventSummary,
  CallbackReplayResponse,
  DeliveryHealth,
  DeliveryStats,
  Problem,
} from '@payments/contracts';
import { createOperator, openAdminDatabase } from '@payments/gateway';
import { CallbackPublisher } from '../support/publish';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * The console's callback side, through HTTP against the real gateway, callback-svc, Postgres and NATS:
 * the list's receivable_id filter and the replay of dead events (public API, each tenant only its
 * own), and the delivery statistics and health (admin API, operator credential only).
 */

// 4 attempts 150 ms apart, then dead.
const FAST = {
  CALLBACK_RETRY_SCHEDULE_MS: '150,150,150',
  CALLBACK_RETRY_JITTER_PERCENT: '0',
  CALLBACK_TIMEOUT_MS: '400',
  CALLBACK_POLL_INTERVAL_MS: '50',
};

let system: TestSystem;
let publisher: CallbackPublisher;
let a: TestTenant;
let b: TestTenant;
let operator: string;
/** A's receiver fails until told otherwise; B's always fails. */
let aAnswers = 500;
let receiverA: CallbackReceiver;
let receiverB: CallbackReceiver;
const chargeX = randomUUID();
const chargeY = randomUUID();

beforeAll(async () => {
  system = await startSystem({ withCallbacks: true, env: FAST });
  publisher = await CallbackPublisher.connect(system.busPrefix);
  a = await system.newTenant('Console A');
  b = await system.newTenant('Console B');
  const adminDb = await openAdminDatabase(system.databaseUrl);
  operator = (await createOperator(adminDb, 'Console Ops', { operator: 'test' }).finally(() => adminDb.destroy()))
    .credential;
  receiverA = await new CallbackReceiver(() => ({ status: aAnswers })).start();
  receiverB = await new CallbackReceiver(() => ({ status: 503 })).start();
  const paid = (charge: string) => ({ success: true, type: 'paid', accounts_receivable_id: charge });
  await publisher.publish(publisher.request(a.tenantId, receiverA.url, paid(chargeX), 'receivable.paid'));
  await publisher.publish(publisher.request(a.tenantId, receiverA.url));
  await publisher.publish(
    publisher.request(a.tenantId, receiverA.url, {
      success: true,
      type: 'registered',
      accounts_receivable_id: chargeX,
    }),
  );
  await publisher.publish(publisher.request(a.tenantId, receiverA.url, paid(chargeY), 'receivable.paid'));
  await publisher.publish(publisher.request(b.tenantId, receiverB.url, paid(chargeX), 'receivable.paid'));
  await waitFor(async () => (await dead(a)).length === 4 && (await dead(b)).length === 1, 20_000, 'all dead');
}, 60_000);

afterAll(async () => {
  await receiverA?.stop();
  await receiverB?.stop();
  await publisher?.close();
  await system?.stop();
});

async function list(t: TestTenant, query: string): Promise<CallbackEventSummary[]> {
  const res = await t.api.send<CallbackEventSummary[]>('GET', `/api/v1/callbacks?${query}`);
  expect(res.status).toBe(200);
  return res.json;
}
const dead = (t: TestTenant) => list(t, 'status=dead');

async function admin<T>(path: string, auth: string = operator): Promise<{ status: number; json: T }> {
  const res = await fetch(system.gateway.adminUrl + path, {
    headers: auth ? { authorization: `Bearer ${auth}` } : {},
  });
  return { status: res.status, json: (await res.json()) as T };
}

const fieldsOf = (problem: Problem) => (problem.errors ?? []).map((e) => e.path);

it("lists a charge's events, only the asking tenant's, and refuses (422) a receivable_id that is not a UUID", async () => {
  const ofX = await list(a, `receivable_id=${chargeX}`);
  expect(ofX.map((e) => e.event_type).sort()).toEqual(['receivable.paid', 'receivable.registered']);
  expect(await list(a, `receivable_id=${chargeY}`)).toHaveLength(1);
  // B has an event of a charge with the same id: it sees its own only, and A's stay A's.
  expect((await list(b, `receivable_id=${chargeX}`)).map((e) => e.event_type)).toEqual(['receivable.paid']);
  expect(await list(b, `receivable_id=${chargeY}`)).toEqual([]);
  // Upper case is the same charge.
  expect(await list(a, `receivable_id=${chargeX.toUpperCase()}&status=dead`)).toHaveLength(2);
  const bad = await a.api.send<Problem>('GET', '/api/v1/callbacks?receivable_id=12345');
  expect(bad.status).toBe(422);
  expect(bad.headers.get('content-type')).toContain('application/problem+json');
  expect(fieldsOf(bad.json)).toEqual(['/receivable_id']);
});

it('refuses a bad replay (422) naming the field, and replays nothing then', async () => {
  const hour = 3_600_000;
  const cases: Array<[unknown, string]> = [
    [undefined, '/since'],
    [{}, '/since'],
    [{ since: 'yesterday' }, '/since'],
    [{ since: '2026-01-01T00:00:00' }, '/since'], // no zone
    [{ since: new Date(Date.now() + hour).toISOString() }, '/since'],
    [{ since: new Date(Date.now() - 31 * 24 * hour).toISOString() }, '/since'],
    [
      { since: new Date(Date.now() - hour).toISOString(), until: new Date(Date.now() - 2 * hour).toISOString() },
      '/until',
    ],
  ];
  for (const [body, field] of cases) {
    const res = await a.api.send<Problem>('POST', '/api/v1/callbacks/replay', body);
    expect({ body, status: res.status, fields: fieldsOf(res.json) }).toEqual({ body, status: 422, fields: [field] });
  }
  expect(await dead(a)).toHaveLength(4);
});

it("replays only the asking tenant's dead events of the span, each with a fresh run of attempts", async () => {
  const since = new Date(Date.now() - 3_600_000).toISOString();
  // Nothing died in the last hour's first half.
  const early = await a.api.send<CallbackReplayResponse>('POST', '/api/v1/callbacks/replay', {
    since,
    until: new Date(Date.now() - 1_800_000).toISOString(),
  });
  expect(early.status).toBe(202);
  expect(early.json.replayed).toBe(0);
  // B's replay queues B's one event, none of A's (still dead, not attempted again).
  const attemptsOfA = receiverA.received.length;
  const byB = await b.api.send<CallbackReplayResponse>('POST', '/api/v1/callbacks/replay', { since });
  expect(byB.status).toBe(202);
  expect(byB.json).toEqual({ replayed: 1, since: new Date(since).toISOString(), until: null });
  await waitFor(() => receiverB.received.length >= 5, 10_000, "B's event attempted again");
  expect(await dead(a)).toHaveLength(4);
  expect(receiverA.received.length).toBe(attemptsOfA);
  // A's receiver mended: A's replay delivers its four, with an Idempotency-Key answered again as such.
  aAnswers = 200;
  const headers = { 'idempotency-key': `replay-${randomUUID()}` };
  const byA = await a.api.send<CallbackReplayResponse>('POST', '/api/v1/callbacks/replay', { since }, headers);
  expect(byA.status).toBe(202);
  expect(byA.json.replayed).toBe(4);
  const again = await a.api.send<CallbackReplayResponse>('POST', '/api/v1/callbacks/replay', { since }, headers);
  expect(again.json).toEqual(byA.json);
  await waitFor(async () => (await list(a, 'status=delivered')).length === 4, 10_000, "A's four delivered");
  expect(await dead(a)).toEqual([]);
});

it('answers the delivery statistics and health to an operator only, refusing bad parameters (422) by name', async () => {
  // Without a credential, or with a tenant's JWT: refused, on both routes.
  for (const path of ['/admin/v1/stats/deliveries', '/admin/v1/delivery-health']) {
    expect((await admin(path, '')).status).toBe(401);
    expect((await admin(path, a.accessToken)).status).toBe(401);
  }
  // The public port does not serve them at all.
  expect((await a.api.send('GET', '/admin/v1/stats/deliveries')).status).toBe(404);

  // The rollup runs every 5 s: A's 16 failures and 4 deliveries, B's 8 failures, in the last hour.
  let stats: DeliveryStats | undefined;
  await waitFor(
    async () => {
      stats = (await admin<DeliveryStats>('/admin/v1/stats/deliveries')).json;
      const sum = (k: 'delivered' | 'failed') => stats!.series.reduce((n, s) => n + s[k], 0);
      return sum('delivered') === 4 && sum('failed') === 24;
    },
    20_000,
    'the attempts rolled up',
  );
  expect(stats!.window).toBe('hour');
  expect(stats!.bucket_seconds).toBe(60);
  expect(stats!.series).toHaveLength(60);
  expect(Date.parse(stats!.series[59].at)).toBeLessThanOrEqual(Date.now());
  expect(Date.parse(stats!.to)).toBeGreaterThan(Date.now());
  expect(stats!.series.some((s) => s.p99_ms !== null)).toBe(true);

  const ofB = (await admin<DeliveryStats>(`/admin/v1/stats/deliveries?window=day&tenant_id=${b.tenantId}`)).json;
  expect(ofB.series).toHaveLength(96);
  expect(ofB.bucket_seconds).toBe(900);
  expect(ofB.series.reduce((n, s) => n + s.delivered, 0)).toBe(0);
  expect(ofB.series.reduce((n, s) => n + s.failed, 0)).toBe(8);

  const health = await admin<DeliveryHealth>('/admin/v1/delivery-health?window=hour');
  expect(health.status).toBe(200);
  // B never delivered: worst first.
  expect(health.json.tenants.map((t) => [t.tenant_name, t.delivered, t.failed, t.success_rate])).toEqual([
    ['Console B', 0, 8, 0],
    ['Console A', 4, 16, 0.2],
  ]);
  expect(health.json.tenants[0]).toMatchObject({ tenant_id: b.tenantId, pending: 0 });
  expect(health.json.tenants[0].last_error).toMatch(/^HTTP 503/);
  expect(Date.parse(health.json.tenants[0].last_failure_at!)).toBeGreaterThan(Date.now() - 60_000);
  const hostB = new URL(receiverB.url).host;
  expect(health.json.hosts[0]).toMatchObject({ host: hostB, failed: 8, success_rate: 0 });

  const bad = [
    ['/admin/v1/stats/deliveries?window=week', '/window'],
    ['/admin/v1/stats/deliveries?tenant_id=nope', '/tenant_id'],
    ['/admin/v1/delivery-health?window=month', '/window'],
  ];
  for (const [path, field] of bad) {
    const res = await admin<Problem>(path);
    expect({ path, status: res.status, fields: fieldsOf(res.json).map((f) => `/${f.replace(/^\//, '')}`) }).toEqual({
      path,
      status: 422,
      fields: [field],
    });
  }
});
