import { startSystem, type TestSystem, type TestTenant } from '../support/system';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { CallbackPublisher } from '../support/publish';
import { AppProcess } from '../support/process';

// callback-svc runs as its own process here, so that it can be killed (SIGKILL) mid-schedule.
let system: TestSystem;
let tenant: TestTenant;
let publisher: CallbackPublisher;
let receiver: CallbackReceiver;
let callbackSvc: AppProcess;

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
  await callbackSvc?.kill();
  await receiver?.stop();
  await publisher?.close();
  await system?.stop();
});

async function attempts(eventId: string): Promise<Array<{ status_code: number | null }>> {
  const res = await tenant.api.send<{ attempts: Array<{ status_code: number | null }>; status: string }>('GET', `/api/v1/callbacks/${eventId}`);
  return res.status === 200 ? res.json.attempts : [];
}

it('resumes the retry schedule after a kill -9, without losing or duplicating the event', async () => {
  const request = publisher.request(tenant.tenantId, receiver?.url ?? '');
  // The first event fails twice, then succeeds; any other event succeeds at once.
  const seenFirst = { n: 0 };
  receiver = await new CallbackReceiver((_n, req) => (req.headers['webhook-id'] === request.event_id && seenFirst.n++ < 2 ? { status: 500 } : { status: 200 })).start();
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
  expect(receiver.delivered().map((r) => r.headers['webhook-id']).sort()).toEqual([request.event_id, whileDown.event_id].sort());
});

it('stops gracefully on SIGTERM (exit code 0)', async () => {
  expect(await callbackSvc.stop()).toBe(0);
});
