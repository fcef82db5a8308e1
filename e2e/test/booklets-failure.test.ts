import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { BookletResponse, CallbackEventView } from '@payments/contracts';
import type { BookletCallback } from '../support/booklet-callbacks';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { clientPayload, receivablePayload } from '../support/fixtures';

let system: TestSystem;
let tenant: TestTenant;
let receiver: CallbackReceiver;
let clientId: string;

// The provider stays down for this whole file, so installments never leave registration.
beforeAll(async () => {
  system = await startSystem({
    withReceivables: true,
    withBooklets: true,
    env: { CALLBACK_POLL_INTERVAL_MS: '50', BOOKLET_MAX_WAIT_MS: '3000' },
  });
  tenant = await system.newTenant('Loja Sem Banco');
  receiver = await new CallbackReceiver().start();
  const client = clientPayload();
  clientId = client.client_id;
  await tenant.api.postIdempotent('/api/v1/clients', [client]);
  await setSandbox('down');
});
afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
});

async function setSandbox(mode: 'down' | 'normal'): Promise<void> {
  const res = await fetch(`${system.sandboxUrl}/sandbox/behaviour`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mode }),
  });
  expect(res.status).toBe(200);
}

function bookletCallbacks(slip: string) {
  return receiver.received.filter(
    (r) =>
      (JSON.parse(r.body) as BookletCallback).payment_slip_id === slip &&
      (JSON.parse(r.body) as BookletCallback).type === 'sent',
  );
}

async function issueInstallments(slip: string, count: number) {
  const items = Array.from({ length: count }, (_, i) =>
    receivablePayload(clientId, receiver.url, { payment_slip_id: slip, due_date: `2027-0${i + 1}-10` }),
  );
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', items)).status).toBe(202);
  return items;
}

it('sends a signed failure callback when installments stay unregistered past BOOKLET_MAX_WAIT_MS', async () => {
  const slip = randomUUID();
  await issueInstallments(slip, 2);
  const res = await tenant.api.postIdempotent<BookletResponse>(`/api/v1/bank-slip-booklet/${slip}`, {
    url_callback: receiver.url,
  });
  expect(res.status).toBe(202);
  expect(res.json.message).toMatch(/2 of them are still being registered/);

  await waitFor(() => bookletCallbacks(slip).length > 0, 20_000, 'booklet failure callback');
  const [delivery] = bookletCallbacks(slip);
  expect(JSON.parse(delivery.body)).toEqual({
    success: false,
    type: 'sent',
    payment_slip_id: slip,
    error: { code: 'registration_pending', message: expect.stringMatching(/not registered/) },
  });
  expect(delivery.body).not.toContain('download');
  // Signed like every callback, so the ERP can trust a failure as much as a success.
  expect(() => new Webhook(tenant.signingSecret).verify(delivery.body, delivery.headers)).not.toThrow();

  // The same booklet is not reported twice, and its callback is visible as a delivered booklet.failed event.
  await new Promise((r) => setTimeout(r, 2_500));
  expect(bookletCallbacks(slip)).toHaveLength(1);
  const event = await tenant.api.send<CallbackEventView>('GET', `/api/v1/callbacks/${delivery.headers['webhook-id']}`);
  expect(event.status).toBe(200);
  expect(event.json).toMatchObject({ event_type: 'booklet.failed', status: 'delivered' });
  expect(event.json.payload).toEqual(JSON.parse(delivery.body));
});

it('sends a no_installments failure when every installment is cancelled before the booklet is built', async () => {
  const slip = randomUUID();
  const items = await issueInstallments(slip, 2);
  const res = await tenant.api.postIdempotent(`/api/v1/bank-slip-booklet/${slip}`, { url_callback: receiver.url });
  expect(res.status).toBe(202);
  for (const item of items) {
    expect(
      (await tenant.api.postIdempotent(`/api/v1/accounts-receivable/${item.account_receivable_id}/cancel`, undefined))
        .status,
    ).toBe(202);
  }

  await waitFor(() => bookletCallbacks(slip).length > 0, 20_000, 'booklet failure callback');
  expect(JSON.parse(bookletCallbacks(slip)[0].body)).toMatchObject({
    success: false,
    type: 'sent',
    payment_slip_id: slip,
    error: { code: 'no_installments' },
  });
  // With nothing left open, a new booklet request for the slip is refused.
  expect(
    (await tenant.api.postIdempotent(`/api/v1/bank-slip-booklet/${slip}`, { url_callback: receiver.url })).status,
  ).toBe(404);
});
