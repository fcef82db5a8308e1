import { randomUUID } from 'node:crypto';
import type {
  BookletResponse,
  ClientsCreateResponse,
  ClientUpdateResponse,
  ConsultResult,
  SearchResultItem,
} from '@payments/contracts';
import { bookletSent } from '../support/booklet-callbacks';
import { countClients, queryRows } from '../support/db-probe';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { isCancellationResult, isRegistered, receivableCallbacks } from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

// docs/architecture.md: ERP ids (UUIDs) match in any letter case, in bodies and paths, and come back exactly as
// the ERP sent them when it created the record: in answers, callbacks, search and consult.

let system: TestSystem;
let receiver: CallbackReceiver;
let tenant: TestTenant;

beforeAll(async () => {
  system = await startSystem({
    withReceivables: true,
    withBooklets: true,
    env: { CALLBACK_POLL_INTERVAL_MS: '50', PROVIDER_RETRIES: '0' },
  });
  receiver = await new CallbackReceiver().start();
  tenant = await system.newTenant('Grafia');
});
afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
});

/** A UUID in mixed case: neither its lower- nor its upper-case form. */
const mixedCase = () => `aBcD${randomUUID().slice(4).toUpperCase()}`;

async function countReceivables(): Promise<number> {
  const rows = await queryRows<{ n: string }>(
    system.databaseUrl,
    'select count(*) as n from receivables.receivables where tenant_id = $1',
    [tenant.tenantId],
  );
  return Number(rows[0].n);
}

it('answers, searches and calls back with the ids as first sent, whatever spelling later requests use', async () => {
  const clientId = mixedCase();
  const client = clientPayload({ client_id: clientId });
  const created = await tenant.api.postIdempotent<ClientsCreateResponse>('/api/v1/clients', [client]);
  expect(created.status).toBe(201);
  expect(created.json.total_created_clients).toEqual([{ client_id: clientId }]);

  // The lower-case spelling is the same client: a duplicate, answered with the original spelling.
  const again = await tenant.api.postIdempotent<ClientsCreateResponse>('/api/v1/clients', [
    { ...client, client_id: clientId.toLowerCase(), return_client_data: true },
  ]);
  expect(again.status).toBe(201);
  expect(again.json.total_created_clients).toEqual([]);
  expect(again.json.clients_already_registered).toEqual([{ client_id: clientId }]);
  expect(await countClients(system.databaseUrl, tenant.tenantId)).toBe(1);
  const updated = await tenant.api.send<ClientUpdateResponse>(
    'PUT',
    `/api/v1/clients/${clientId.toUpperCase()}`,
    { ...client, client_id: undefined, name: 'Maria Grafia' },
    { 'idempotency-key': randomUUID() },
  );
  expect(updated.status).toBe(200);
  expect(updated.json.data.razao).toBe('Maria Grafia');

  // The charge names its client in another spelling still: it is found.
  const arId = mixedCase();
  const slipId = mixedCase();
  const charge = receivablePayload(clientId.toUpperCase(), receiver.url, {
    account_receivable_id: arId,
    payment_slip_id: slipId,
  });
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', [charge])).status).toBe(202);
  const duplicate = await tenant.api.postIdempotent<{ message: string }>('/api/v1/accounts-receivable', [
    { ...charge, account_receivable_id: arId.toLowerCase(), value: 99 },
  ]);
  expect(duplicate.status).toBe(202);
  expect(duplicate.json.message).toMatch(/^0 receivable\(s\).*1 already existed/);
  expect(await countReceivables()).toBe(1);

  await waitFor(() => receivableCallbacks(receiver, arId).some(isRegistered), 20_000, 'registered callback');
  expect(receivableCallbacks(receiver).map((c) => c.accounts_receivable_id)).toEqual([arId]);

  for (const spelling of [arId.toLowerCase(), arId.toUpperCase(), arId]) {
    const consult = await tenant.api.post<ConsultResult>(`/api/v1/accounts-receivable/${spelling}/consult-transaction`);
    expect(consult.status).toBe(200);
    expect(consult.json).toMatchObject({
      accounts_receivable_id: arId,
      client_name: 'Maria Grafia',
      amount_due: 150.75,
    });
  }
  const search = await tenant.api.post<SearchResultItem[]>('/api/v1/accounts-receivable/search', {
    state: 'all',
    start_date: '2026-11-01',
    end_date: '2026-11-30',
  });
  expect(search.status).toBe(200);
  expect(search.json.map((r) => r.accounts_receivable_id)).toEqual([arId]);

  // A booklet asked for in lower case: the answer and its callback name the slip as the charge did.
  const booklet = await tenant.api.postIdempotent<BookletResponse>(
    `/api/v1/bank-slip-booklet/${slipId.toLowerCase()}`,
    { url_callback: receiver.url },
  );
  expect(booklet.status).toBe(202);
  expect(booklet.json.payment_slip_id).toBe(slipId);
  await waitFor(() => bookletSent(receiver, slipId) !== undefined, 20_000, 'booklet sent callback');

  const cancel = await tenant.api.postIdempotent(`/api/v1/accounts-receivable/${arId.toUpperCase()}/cancel`, undefined);
  expect(cancel.status).toBe(202);
  await waitFor(() => receivableCallbacks(receiver, arId).some(isCancellationResult), 20_000, 'cancellation callback');
  expect(receivableCallbacks(receiver, arId).find(isCancellationResult)).toMatchObject({
    status: 'success',
    accounts_receivable_id: arId,
  });
});
