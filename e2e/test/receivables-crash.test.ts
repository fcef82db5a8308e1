import type { ReceivableCallback } from '../support/receivable-callbacks';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { AppProcess } from '../support/process';
import { queryRows } from '../support/db-probe';

// receivables-svc runs as its own process so that it can be killed (SIGKILL) in the middle of a batch.
let system: TestSystem;
let tenant: TestTenant;
let receiver: CallbackReceiver;
let receivables: AppProcess;

beforeAll(async () => {
  system = await startSystem({ withSandboxOnly: true, withCallbacks: true, env: { CALLBACK_POLL_INTERVAL_MS: '100' } });
  tenant = await system.newTenant('Crash');
  receiver = await new CallbackReceiver().start();
  receivables = new AppProcess('receivables-svc', { ...system.env, LOG_LEVEL: 'info', REGISTRATION_CONCURRENCY: '16' });
});
afterAll(async () => {
  await receivables?.kill();
  await receiver?.stop();
  await system?.stop();
});

it('registers every charge of a batch of 1,000 exactly once, with one callback each, across a kill -9', async () => {
  await receivables.start('receivables-svc ready');
  const client = clientPayload();
  expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
  const batch = Array.from({ length: 1000 }, (_, i) =>
    receivablePayload(client.client_id, receiver.url, { payment_method: i % 3 === 0 ? 3 : 1, items: [] }),
  );
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', batch)).status).toBe(202);

  // Kill it while registrations are under way.
  await waitFor(() => receiver.received.length >= 50, 30_000, 'some callbacks');
  await receivables.kill();
  const atKill = receiver.received.length;
  expect(atKill).toBeLessThan(1000);

  await receivables.start('receivables-svc ready');
  await waitFor(
    () => new Set(receiver.received.map((r) => r.headers['webhook-id'])).size >= 1000,
    90_000,
    '1,000 callbacks',
  );
  await new Promise((r) => setTimeout(r, 2000));

  const byReceivable = new Map<string, number>();
  for (const r of receiver.received) {
    const body = JSON.parse(r.body) as ReceivableCallback;
    expect(body).toMatchObject({ type: 'registered', success: true });
    byReceivable.set(body.accounts_receivable_id, (byReceivable.get(body.accounts_receivable_id) ?? 0) + 1);
  }
  expect(byReceivable.size).toBe(1000);
  expect([...byReceivable.values()].every((n) => n === 1)).toBe(true);

  // Exactly one charge per receivable at the provider, and each receivable holds its charge.
  const charges = await queryRows<{ n: string; distinct_refs: string }>(
    system.databaseUrl,
    'select count(*) as n, count(distinct idempotency_key) as distinct_refs from bank_sandbox.charges',
  );
  expect(Number(charges[0].n)).toBe(1000);
  expect(Number(charges[0].distinct_refs)).toBe(1000);
  const registered = await queryRows<{ n: string }>(
    system.databaseUrl,
    "select count(*) as n from receivables.receivables where registration_status = 'registered' and provider_charge_id is not null",
  );
  expect(Number(registered[0].n)).toBe(1000);
}, 180_000);
