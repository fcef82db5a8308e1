import { MetricNames } from '@payments/metrics';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { findSeries, scrape } from '../support/prometheus';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

// Every app of the system answers /healthz, /readyz and /metrics on its own port, and the metrics
// the issue asks for show up after real API traffic.

let system: TestSystem;
let tenant: TestTenant;
let receiver: CallbackReceiver;

beforeAll(async () => {
  system = await startSystem({
    withReceivables: true,
    withBooklets: true,
    env: { CALLBACK_POLL_INTERVAL_MS: '50', PROVIDER_RETRIES: '0' },
  });
  tenant = await system.newTenant('Ops');
  receiver = await new CallbackReceiver().start();
}, 60_000);
afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
});

function appUrls(): Record<string, string> {
  return {
    gateway: system.gateway.url,
    'clients-svc': system.clients!.url,
    'receivables-svc': system.receivables!.url,
    'booklet-svc': system.booklets!.url,
    'callback-svc': system.callbacks!.url,
    'bank-sandbox': system.sandboxUrl!,
  };
}

it('every app answers /healthz 200, /readyz 200 and /metrics in Prometheus text', async () => {
  for (const [app, url] of Object.entries(appUrls())) {
    const health = await fetch(`${url}/healthz`);
    expect({ app, status: health.status }).toEqual({ app, status: 200 });
    expect(await health.json()).toMatchObject({ status: 'ok' });

    const ready = await fetch(`${url}/readyz`);
    const body = (await ready.json()) as { status: string; checks: Record<string, { status: string }> };
    expect({ app, status: ready.status, body: body.status }).toEqual({ app, status: 200, body: 'ok' });
    // The bank sandbox has no NATS: its readiness is its own Postgres.
    const expected = app === 'bank-sandbox' ? ['migrations', 'postgres'] : ['migrations', 'nats', 'postgres'];
    expect(Object.keys(body.checks).sort()).toEqual(expected);

    const metrics = await fetch(`${url}/metrics`);
    expect({ app, status: metrics.status }).toEqual({ app, status: 200 });
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await metrics.text();
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(text).toContain(`service="${app}"`);
  }
});

it('after API calls, /metrics shows requests by route template and charges by state, registration latency and callback attempts', async () => {
  const client = clientPayload();
  expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
  const batch = [
    receivablePayload(client.client_id, receiver.url),
    receivablePayload(client.client_id, receiver.url, { payment_method: 3 }),
  ];
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', batch)).status).toBe(202);
  const consulted = await tenant.api.post(
    `/api/v1/accounts-receivable/${batch[0].account_receivable_id}/consult-transaction`,
  );
  expect(consulted.status).toBe(200);
  await waitFor(() => receiver.received.length >= 2, 20_000, 'the registered callbacks');

  const gateway = await scrape(system.gateway.url);
  expect(
    findSeries(gateway, MetricNames.httpRequests, {
      method: 'POST',
      route: '/api/v1/clients',
      status: '201',
      service: 'gateway',
    }),
  ).toEqual([expect.objectContaining({ value: 1 })]);
  // A parametrised route is counted under its template, never under the raw path with the id in it.
  const consult = findSeries(gateway, MetricNames.httpRequests, { method: 'POST', status: '200' }).filter((s) =>
    s.labels.route.includes('consult-transaction'),
  );
  expect(consult).toEqual([
    expect.objectContaining({
      value: 1,
      labels: expect.objectContaining({ route: expect.stringMatching(/\/:\w+\/consult-transaction$/) }),
    }),
  ]);
  expect(JSON.stringify(gateway)).not.toContain(batch[0].account_receivable_id);
  expect(findSeries(gateway, `${MetricNames.httpRequestDuration}_count`, { route: '/api/v1/clients' })[0]?.value).toBe(
    1,
  );

  // Scraped gauges are cached a few seconds: poll until the read taken after the registrations shows.
  const pendingCharges = async () =>
    findSeries(await scrape(system.receivables!.url), MetricNames.chargesByState, { state: 'pending' })[0]?.value;
  await waitFor(async () => (await pendingCharges()) === 2, 15_000, 'charges_by_state{state="pending"} = 2');
  const receivables = await scrape(system.receivables!.url);
  expect(
    findSeries(receivables, MetricNames.chargesByState)
      .map((s) => s.labels.state)
      .sort(),
  ).toEqual(['approved', 'cancelled', 'pending', 'rejected']);
  expect(findSeries(receivables, `${MetricNames.registrationLatency}_count`)[0]?.value).toBe(2);
  expect(findSeries(receivables, MetricNames.outboxWaiting)).toHaveLength(3);

  const callbacks = await scrape(system.callbacks!.url);
  expect(
    findSeries(callbacks, MetricNames.callbackAttempts, { outcome: 'delivered' })[0]?.value,
  ).toBeGreaterThanOrEqual(2);
  expect(findSeries(callbacks, MetricNames.callbacksDead)[0]?.value).toBe(0);
  expect(findSeries(callbacks, MetricNames.callbackDeliveriesWaiting)).toHaveLength(1);
  expect(findSeries(callbacks, MetricNames.callbackDeliveriesHeld)[0]?.value).toBe(0); // all delivered: nothing held

  // One series per stream its outbox relay serves (booklet builds, callback requests), at 0 when idle.
  expect(findSeries(await scrape(system.booklets!.url), MetricNames.outboxWaiting)).toHaveLength(2);
}, 60_000);
