import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { BookletResponse } from '@payments/contracts';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { queryRows } from '../support/db-probe';
import { receivedCallbacks, type BookletCallback } from '../support/booklet-callbacks';
import {
  asRegistered,
  isCancellationResult,
  isPaid,
  isRegistered,
  payAtSandbox,
  receivableCallbacks,
  setSandboxMode,
} from '../support/receivable-callbacks';

/**
 * Every 202 keeps its promise (Cancellation, docs/api.md): an accepted cancel gets
 * exactly one result callback even when the charge is paid first, and a booklet request retried
 * after a 5xx is one booklet and one callback.
 */
const BUS_TIMEOUT_MS = 1_500;
const LOCK_TIMEOUT_MS = 4_000;

let system: TestSystem;
let tenant: TestTenant;
let receiver: CallbackReceiver;
let clientId: string;

beforeAll(async () => {
  system = await startSystem({
    withReceivables: true,
    withBooklets: true,
    env: {
      CALLBACK_RETRY_SCHEDULE_MS: '200,400,800',
      CALLBACK_POLL_INTERVAL_MS: '50',
      PROVIDER_RETRIES: '0',
      BUS_TIMEOUT_MS: String(BUS_TIMEOUT_MS),
      IDEMPOTENCY_LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS),
    },
  });
  tenant = await system.newTenant('Promises');
  receiver = await new CallbackReceiver().start();
  const client = clientPayload();
  clientId = client.client_id;
  expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
});
afterAll(async () => {
  await setSandboxMode(system.sandboxUrl!, 'normal').catch(() => undefined);
  await receiver?.stop();
  await system?.stop();
});

/** Issues charges and waits until the provider registered every one. */
async function registeredCharges(overrides: Record<string, unknown>[]) {
  const items = overrides.map((o) => receivablePayload(clientId, receiver.url, o));
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', items)).status).toBe(202);
  await waitFor(
    () => items.every((i) => receivableCallbacks(receiver, i.account_receivable_id).some(isRegistered)),
    20_000,
    'registered callbacks',
  );
  return items.map((i) => ({
    item: i,
    registered: asRegistered(receivableCallbacks(receiver, i.account_receivable_id).find(isRegistered)),
  }));
}

it('answers a cancel paid before it ran with one paid callback and one cancellation error callback', async () => {
  const [{ item, registered }] = await registeredCharges([{}]);
  const id = item.account_receivable_id;

  // The bank cannot cancel for now: the accepted cancellation stays queued while the charge is paid.
  await setSandboxMode(system.sandboxUrl!, 'down');
  try {
    const cancel = await tenant.api.postIdempotent(`/api/v1/accounts-receivable/${id}/cancel`, undefined);
    expect(cancel.status).toBe(202);
    expect((await payAtSandbox(system.sandboxUrl!, registered.payment_data.our_number, 'pix')).status).toBe(200);
    await waitFor(() => receivableCallbacks(receiver, id).some(isPaid), 20_000, 'paid callback');
  } finally {
    await setSandboxMode(system.sandboxUrl!, 'normal');
  }

  await waitFor(
    () => receivableCallbacks(receiver, id).some(isCancellationResult),
    30_000,
    'cancellation result callback',
  );
  // Room for a second (wrong) result to arrive before counting.
  await new Promise((r) => setTimeout(r, 2_000));
  const callbacks = receivableCallbacks(receiver, id);
  expect(callbacks.filter(isPaid)).toHaveLength(1);
  const results = callbacks.filter(isCancellationResult);
  expect(results).toEqual([
    {
      status: 'error',
      accounts_receivable_id: id,
      message: expect.stringMatching(/paid before it could be cancelled/),
    },
  ]);
  const consult = await tenant.api.post<{ status_payment: string }>(
    `/api/v1/accounts-receivable/${id}/consult-transaction`,
  );
  expect(consult.json).toMatchObject({ status_payment: 'Aprovada' });
});

it('builds one booklet and sends one callback for a booklet request retried after a 5xx', async () => {
  const slip = randomUUID();
  await registeredCharges([
    { payment_slip_id: slip, due_date: '2027-01-10' },
    { payment_slip_id: slip, due_date: '2027-02-10' },
  ]);
  const key = randomUUID();
  const request = () =>
    tenant.api.postIdempotent<BookletResponse>(
      `/api/v1/bank-slip-booklet/${slip}`,
      { url_callback: receiver.url },
      key,
    );

  // booklet-svc takes the request but cannot store it while the table is locked: the gateway's bus
  // request times out (503) and booklet-svc commits once the lock is gone.
  const locker = new pg.Client({ connectionString: system.databaseUrl });
  await locker.connect();
  try {
    await locker.query('begin');
    await locker.query('lock table booklets.booklets in share row exclusive mode');
    const first = await request();
    expect(first.status).toBe(503);
    // The first request may still commit: its key is not taken over yet.
    const early = await request();
    expect(early.status).toBe(409);
    expect(early.json).toMatchObject({ code: 'idempotency_request_in_progress' });
    await locker.query('commit');
  } finally {
    await locker.end();
  }
  await waitFor(
    async () =>
      (await queryRows(system.databaseUrl, 'select id from booklets.booklets where payment_slip_id = $1', [slip]))
        .length === 1,
    10_000,
    'the first request committed',
  );

  // After the lock timeout the retry runs again, and finds the booklet the first request stored.
  await new Promise((r) => setTimeout(r, LOCK_TIMEOUT_MS));
  const retry = await request();
  expect(retry.status).toBe(202);
  expect(retry.json).toMatchObject({ success: true, type: 'preparing', payment_slip_id: slip });
  const replay = await request();
  expect(replay.status).toBe(202);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');

  const sent = () =>
    receivedCallbacks(receiver).filter(
      (c): c is BookletCallback => 'type' in c && c.type === 'sent' && c.payment_slip_id === slip,
    );
  await waitFor(() => sent().length > 0, 30_000, 'booklet sent callback');
  await new Promise((r) => setTimeout(r, 2_000));
  expect(sent()).toHaveLength(1);
  const booklets = await queryRows(system.databaseUrl, 'select id from booklets.booklets where payment_slip_id = $1', [
    slip,
  ]);
  expect(booklets).toHaveLength(1);
});
