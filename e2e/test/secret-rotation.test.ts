import { Webhook } from 'standardwebhooks';
import { runAdmin } from '../support/admin-cli';
import { CallbackPublisher } from '../support/publish';
import { CallbackReceiver, waitFor, type ReceivedCallback } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * Signing-secret rotation: a callback sent right after `tenant rotate-secret` carries both
 * signatures, so a receiver holding the old or the new secret verifies it; after `--overlap-hours 0`
 * only the new secret does.
 */

let system: TestSystem;
let publisher: CallbackPublisher;
let receiver: CallbackReceiver;
let tenant: TestTenant;

beforeAll(async () => {
  system = await startSystem({ withCallbacks: true, env: { CALLBACK_POLL_INTERVAL_MS: '50' } });
  publisher = await CallbackPublisher.connect(system.busPrefix);
  receiver = await new CallbackReceiver().start();
  tenant = await system.newTenant('Rotation');
}, 60_000);
afterAll(async () => {
  await receiver?.stop();
  await publisher?.close();
  await system?.stop();
});

interface Rotated {
  tenant_id: string;
  signing_secret: string;
  previous_valid_until: string;
}

async function rotate(overlapHours: string): Promise<Rotated> {
  const run = await runAdmin(system.databaseUrl, [
    ...['tenant', 'rotate-secret', '--tenant', tenant.tenantId, '--overlap-hours', overlapHours, '--json'],
  ]);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(run.stdout) as Rotated;
}

/** Publishes one callback for the tenant and returns it as the receiver got it. */
async function callback(): Promise<ReceivedCallback> {
  const request = publisher.request(tenant.tenantId, receiver.url);
  await publisher.publish(request);
  await waitFor(() => receiver.received.some((r) => r.headers['webhook-id'] === request.event_id), 10_000, 'callback');
  return receiver.received.find((r) => r.headers['webhook-id'] === request.event_id)!;
}

const verifies = (secret: string, got: ReceivedCallback) => {
  try {
    new Webhook(secret).verify(got.body, got.headers);
    return true;
  } catch {
    return false;
  }
};

it('signs with the old and the new secret during the overlap, and with the new one alone after --overlap-hours 0', async () => {
  const original = tenant.signingSecret;
  // Before: one signature, the tenant's secret (and callback-svc has now asked for it once).
  const before = await callback();
  expect(before.headers['webhook-signature'].split(' ')).toHaveLength(1);
  expect(verifies(original, before)).toBe(true);

  const started = Date.now();
  const first = await rotate('0.5');
  expect(first.tenant_id).toBe(tenant.tenantId);
  expect(first.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
  expect(first.signing_secret).not.toBe(original);
  // Half an hour from the rotation, in ISO 8601.
  expect(first.previous_valid_until).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const end = Date.parse(first.previous_valid_until);
  expect(end - started).toBeGreaterThan(1_790_000);
  expect(end - Date.now()).toBeLessThan(1_800_000);

  // Seconds later: both signatures, new first; a receiver with either secret verifies it.
  const during = await callback();
  expect(during.headers['webhook-signature'].split(' ')).toHaveLength(2);
  expect(verifies(first.signing_secret, during)).toBe(true);
  expect(verifies(original, during)).toBe(true);

  const second = await rotate('0');
  expect(Math.abs(Date.parse(second.previous_valid_until) - Date.now())).toBeLessThan(10_000);
  const after = await callback();
  expect(after.headers['webhook-signature'].split(' ')).toHaveLength(1);
  expect(verifies(second.signing_secret, after)).toBe(true);
  expect(verifies(first.signing_secret, after)).toBe(false);
  expect(verifies(original, after)).toBe(false);
}, 60_000);

it('refuses a bad overlap or an unknown tenant on the command line, rotating nothing', async () => {
  const bad = await runAdmin(system.databaseUrl, [
    ...['tenant', 'rotate-secret', '--tenant', tenant.tenantId, '--overlap-hours', '-1'],
  ]);
  expect(bad.code).not.toBe(0);
  const words = await runAdmin(system.databaseUrl, [
    ...['tenant', 'rotate-secret', '--tenant', tenant.tenantId, '--overlap-hours', 'a day'],
  ]);
  expect({ code: words.code, stderr: words.stderr }).toEqual({
    code: 2,
    stderr: expect.stringMatching(/^error: --overlap-hours must be a number of hours from 0 to 720/),
  });
  const unknown = await runAdmin(system.databaseUrl, [
    ...['tenant', 'rotate-secret', '--tenant', '00000000-0000-4000-8000-000000000000'],
  ]);
  expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({
    code: 1,
    stderr: 'error: no tenant 00000000-0000-4000-8000-000000000000\n',
  });
  // The secret of the last rotation still signs alone.
  const got = await callback();
  expect(got.headers['webhook-signature'].split(' ')).toHaveLength(1);
}, 60_000);
