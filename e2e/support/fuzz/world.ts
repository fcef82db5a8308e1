import type { CallbackEventSummary } from '@payments/contracts';
import { bookletSent } from '../booklet-callbacks';
import { clientPayload, receivablePayload } from '../fixtures';
import { isRegistered, receivableCallbacks } from '../receivable-callbacks';
import { waitFor, type CallbackReceiver } from '../receiver';
import type { TestTenant } from '../system';
import type { FuzzWorld } from './cases';

/**
 * Real records for the accepting tenant, so that valid requests reach them: clients, registered
 * charges over a few payment slips (booklets), one booklet built, the callback events all this sent.
 */
export async function buildWorld(tenant: TestTenant, receiver: CallbackReceiver): Promise<FuzzWorld> {
  const clients = Array.from({ length: 8 }, () => clientPayload());
  ensure(await tenant.api.postIdempotent('/api/v1/clients', clients), 201, 'clients');
  const clientIds = clients.map((c) => c.client_id);
  const slips = [0, 1, 2].map(() => crypto.randomUUID());
  const receivables = Array.from({ length: 12 }, (_, i) =>
    receivablePayload(clientIds[i % clientIds.length], receiver.url, {
      payment_slip_id: slips[i % slips.length],
      due_date: `2026-${String(1 + (i % 12)).padStart(2, '0')}-15`,
      emission_date: '2026-01-02',
    }),
  );
  ensure(await tenant.api.postIdempotent('/api/v1/accounts-receivable', receivables), 202, 'receivables');
  const receivableIds = receivables.map((r) => r.account_receivable_id);
  await waitFor(
    () => receivableIds.every((id) => receivableCallbacks(receiver, id).some(isRegistered)),
    30_000,
    'registered callbacks of the fuzz world',
  );
  const booklet = await tenant.api.postIdempotent(`/api/v1/bank-slip-booklet/${slips[0]}`, {
    url_callback: receiver.url,
  });
  ensure(booklet, 202, 'booklet');
  await waitFor(() => bookletSent(receiver, slips[0]) !== undefined, 30_000, 'the fuzz world booklet');
  const link = new URL(bookletSent(receiver, slips[0])!.download);
  const events = await tenant.api.send<CallbackEventSummary[]>('GET', '/api/v1/callbacks?limit=100');
  ensure(events, 200, 'callback list');
  return {
    receiverUrl: receiver.url,
    clientIds,
    receivableIds,
    paymentSlipIds: slips,
    eventIds: events.json.map((e) => e.event_id),
    bookletLink: { id: decodeURIComponent(link.pathname.split('/').pop()!) },
  };
}

function ensure(res: { status: number; text: string }, status: number, what: string): void {
  if (res.status !== status) throw new Error(`fuzz world: ${what} answered ${res.status}: ${res.text.slice(0, 500)}`);
}
