import type { CallbackEventSummary, CallbackEventView } from '@payments/contracts';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { CallbackPublisher } from '../support/publish';
import { AppProcess } from '../support/process';
import { queryRows } from '../support/db-probe';

// callback-svc runs as its own process here, so that it can be killed (SIGKILL) mid-schedule.
let system: TestSystem;
let tenant: TestTenant;
let publisher: CallbackPublisher;
let receiver: CallbackReceiver;
let callbackSvc: AppProcess;
/** Processes and receivers a test starts on its own: stopped after all, even when the test failed midway. */
const extraApps: AppProcess[] = [];
const extraReceivers: CallbackReceiver[] = [];

beforeAll(async () => {
  system = await startSystem();
  tenant = await system.newTenant('Crash');
  publisher = await CallbackPublisher.connect(system.busPrefix);
  callbackSvc = new AppProcess('callback-svc', {
    DATABASE_URL: system.databaseUrl,
    BUS_PREFIX: system.busPrefix,
    CALLBACK_PORT: '0',
    CALLBACK_RETRY_SCHEDULE_MS: '1500,300,300',
    CALLBACK_RETRY_JITTER_PERCENT: '0',
    CALLBACK_TIMEOUT_MS: '500',
    CALLBACK_LEASE_MS: '1500',
    CALLBACK_POLL_INTERVAL_MS: '100',
  });
});
afterAll(async () => {
  await Promise.all(extraApps.map((p) => p.kill()));
  await Promise.all(extraReceivers.map((r) => r.stop().catch(() => undefined)));
  await callbackSvc?.kill();
  await receiver?.stop();
  await publisher?.close();
  await system?.stop();
});

async function attempts(eventId: string): Promise<CallbackEventView['attempts']> {
  const res = await tenant.api.send<CallbackEventView>('GET', `/api/v1/callbacks/${eventId}`);
  return res.status === 200 ? res.json.attempts : [];
}

it('resumes the retry schedule after a kill -9, without losing or duplicating the event', async () => {
  const request = publisher.request(tenant.tenantId, receiver?.url ?? '');
  // The first event fails twice, then succeeds; any other event succeeds at once.
  const seenFirst = { n: 0 };
  receiver = await new CallbackReceiver((_n, req) =>
    req.headers['webhook-id'] === request.event_id && seenFirst.n++ < 2 ? { status: 500 } : { status: 200 },
  ).start();
  request.url = receiver.url;
  await callbackSvc.start('callback-svc ready');
  await publisher.publish(request);
  await waitFor(async () => (await attempts(request.event_id)).length === 1, 10_000, 'first attempt');

  await callbackSvc.kill(); // in the middle of the schedule: the next attempt is due in 1.5 s
  // Published while the service is down: waits in JetStream.
  const whileDown = publisher.request(tenant.tenantId, receiver.url);
  await publisher.publish(whileDown);
  await new Promise((r) => setTimeout(r, 500));
  expect(receiver.received).toHaveLength(1);

  await callbackSvc.start('callback-svc ready');
  // Up to the consumer's ack wait (10 s) if the dead process's pull took the message published meanwhile.
  await waitFor(() => receiver.delivered().length === 2, 40_000, 'both delivered after restart');
  await new Promise((r) => setTimeout(r, 800));

  expect(receiver.forEvent(request.event_id).map((r) => r.answered)).toEqual([500, 500, 200]);
  expect((await attempts(request.event_id)).map((a) => a.status_code)).toEqual([500, 500, 200]);
  expect(receiver.forEvent(whileDown.event_id).filter((r) => r.answered === 200)).toHaveLength(1);
  expect(
    receiver
      .delivered()
      .map((r) => r.headers['webhook-id'])
      .sort(),
  ).toEqual([request.event_id, whileDown.event_id].sort());
});

it('stops gracefully on SIGTERM (exit code 0)', async () => {
  expect(await callbackSvc.stop()).toBe(0);
});

it('gives the claims of events it had not started back on SIGTERM: another instance delivers them long before their lease ends', async () => {
  const env = {
    DATABASE_URL: system.databaseUrl,
    BUS_PREFIX: system.busPrefix,
    CALLBACK_PORT: '0',
    CALLBACK_RETRY_SCHEDULE_MS: '200',
    CALLBACK_RETRY_JITTER_PERCENT: '0',
    CALLBACK_TIMEOUT_MS: '1000',
    CALLBACK_LEASE_MS: '120000',
    CALLBACK_POLL_INTERVAL_MS: '100',
    CALLBACK_HOST_CONCURRENCY: '2',
  };
  let answer = false;
  const slow = await new CallbackReceiver(() => (answer ? { status: 200 } : 'hang')).start();
  extraReceivers.push(slow);
  const first = new AppProcess('callback-svc', env);
  extraApps.push(first);
  await first.start('callback-svc ready');
  const requests = Array.from({ length: 30 }, () => publisher.request(tenant.tenantId, slow.url));
  await publisher.publishBatch(requests);
  await waitFor(() => slow.received.length >= 2, 10_000, 'the first two in flight');
  // 2 in flight (the host's limit), 28 claimed and held in memory with a 2-minute lease: all under
  // way, so none shows a scheduled next attempt (its lease end is no schedule).
  const ours = new Set(requests.map((r) => r.event_id));
  const pendingOfOurs = async () => {
    const listed = await tenant.api.send<CallbackEventSummary[]>('GET', '/api/v1/callbacks?status=pending&limit=500');
    if (!Array.isArray(listed.json)) throw new Error(`GET /api/v1/callbacks answered ${listed.status}: ${listed.text}`);
    return listed.json.filter((e) => ours.has(e.event_id));
  };
  const held = await pendingOfOurs();
  expect(held).toHaveLength(30);
  expect(held.every((e) => e.next_attempt_at === null)).toBe(true);
  expect(await first.stop()).toBe(0);
  expect(slow.maxInFlight).toBe(2);
  // Given back on stop: unclaimed and due now (the two that timed out are due again 200 ms after their attempt).
  const rows = await queryRows<{ locked_until: Date | null; next_attempt_at: Date }>(
    system.databaseUrl,
    'select locked_until, next_attempt_at from callbacks.events where event_id = any($1)',
    [[...ours]],
  );
  expect(rows).toHaveLength(30);
  expect(rows.every((r) => r.locked_until === null && r.next_attempt_at.getTime() < Date.now() + 1_000)).toBe(true);

  answer = true;
  const second = new AppProcess('callback-svc', env);
  extraApps.push(second);
  await second.start('callback-svc ready');
  try {
    const started = Date.now();
    await waitFor(
      () => new Set(slow.delivered().map((r) => r.headers['webhook-id'])).size === 30,
      20_000,
      'all 30 delivered by the second instance',
    );
    expect(Date.now() - started).toBeLessThan(20_000); // not the 120 s lease
    await new Promise((r) => setTimeout(r, 500));
    expect(slow.delivered()).toHaveLength(30); // each once
    expect(slow.maxInFlight).toBe(2);
  } finally {
    await second.stop();
  }
});
