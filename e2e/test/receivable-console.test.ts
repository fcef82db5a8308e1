import { randomUUID } from 'node:crypto';
import type { Problem, ReceivableHistory, RegistrationStats, SearchResponse } from '@payments/contracts';
import { createOperator, openAdminDatabase } from '@payments/gateway';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { asRegistered, receivableCallbacks } from '../support/receivable-callbacks';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

/*
 * The console's receivables side, through HTTP against the real gateway, clients-svc, receivables-svc,
 * bank sandbox, Postgres and NATS: a charge's history (public API, its tenant only) and the
 * registration statistics (admin API, operator credential only), which receivables-svc's rollup fills
 * from what registration recorded.
 */

let system: TestSystem;
let a: TestTenant;
let b: TestTenant;
let operator: string;
let receiver: CallbackReceiver;
let registered: string;
let rejected: string;

beforeAll(async () => {
  system = await startSystem({ withReceivables: true, env: { PROVIDER_RETRIES: '0' } });
  a = await system.newTenant('Console Charges A');
  b = await system.newTenant('Console Charges B');
  const adminDb = await openAdminDatabase(system.databaseUrl);
  operator = (await createOperator(adminDb, 'Charges Ops', { operator: 'test' }).finally(() => adminDb.destroy()))
    .credential;
  receiver = await new CallbackReceiver().start();
  const payer = clientPayload();
  const refused = clientPayload({ name: 'Cliente [sandbox:reject]' });
  expect((await a.api.postIdempotent('/api/v1/clients', [payer, refused])).status).toBe(201);
  const ok = receivablePayload(payer.client_id, receiver.url);
  const no = receivablePayload(refused.client_id, receiver.url);
  registered = ok.account_receivable_id;
  rejected = no.account_receivable_id;
  expect((await a.api.postIdempotent('/api/v1/accounts-receivable', [ok, no])).status).toBe(202);
  await waitFor(() => receivableCallbacks(receiver).length === 2, 20_000, 'registered and rejected callbacks');
}, 60_000);

afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
});

const history = (t: TestTenant, id: string) =>
  t.api.send<ReceivableHistory & Problem>('GET', `/api/v1/accounts-receivable/${id}/history`);

async function stats(query: string, auth: string = operator): Promise<{ status: number; json: RegistrationStats }> {
  const res = await fetch(`${system.gateway.adminUrl}/admin/v1/stats/registrations${query}`, {
    headers: { authorization: `Bearer ${auth}` },
  });
  return { status: res.status, json: (await res.json()) as RegistrationStats };
}

const totals = (s: RegistrationStats) =>
  s.series.reduce((t, b) => ({ registered: t.registered + b.registered, failed: t.failed + b.failed }), {
    registered: 0,
    failed: 0,
  });

it("answers a charge's history to its tenant only: the receipt, then each state change", async () => {
  const ok = await history(a, registered.toUpperCase());
  expect(ok.status).toBe(200);
  expect(ok.json.items).toEqual([
    { at: expect.any(String), from_state: null, to_state: 'pending', reason: 'received' },
  ]);
  const no = await history(a, rejected);
  expect(no.status).toBe(200);
  expect(no.json.items.map((i) => [i.from_state, i.to_state])).toEqual([
    [null, 'pending'],
    ['pending', 'rejected'],
  ]);
  expect(no.json.items[1].reason).toMatch(/^provider rejected: /);
  expect(Date.parse(no.json.items[1].at)).toBeGreaterThanOrEqual(Date.parse(no.json.items[0].at));

  const theirs = await history(b, registered);
  expect(theirs.status).toBe(404);
  expect(theirs.headers.get('content-type')).toContain('application/problem+json');
  expect((await history(a, randomUUID())).status).toBe(404);
  const bad = await history(a, 'abc');
  expect(bad.status).toBe(422);
  expect(bad.json.errors?.map((e) => e.path)).toEqual(['uuid']);
});

it('counts the registration and the refusal in the statistics within seconds, per tenant, for an operator only', async () => {
  let hour: RegistrationStats | undefined;
  await waitFor(
    async () => {
      hour = (await stats(`?tenant_id=${a.tenantId}`)).json;
      return totals(hour).registered === 1 && totals(hour).failed === 1;
    },
    20_000,
    "A's registration and refusal counted",
  );
  expect(hour).toMatchObject({ window: 'hour', bucket_seconds: 60 });
  expect(hour!.series).toHaveLength(60);
  expect(Date.parse(hour!.to)).toBeGreaterThan(Date.now() - 5_000);

  const day = await stats(`?window=day&tenant_id=${a.tenantId}`);
  expect(day.status).toBe(200);
  expect(day.json.series).toHaveLength(96);
  expect(totals(day.json)).toEqual({ registered: 1, failed: 1 });
  expect(totals((await stats(`?tenant_id=${b.tenantId}`)).json)).toEqual({ registered: 0, failed: 0 });

  expect((await stats('', a.accessToken)).status).toBe(401);
  expect((await stats('?window=week')).status).toBe(422);
});

it('finds charges by payer name in any case and accent, tax id, our_number and amount, for their tenant only', async () => {
  const search = async (t: TestTenant, filters: Record<string, unknown>) => {
    const res = await t.api.post<SearchResponse & Problem>('/api/v1/accounts-receivable/search', {
      state: 'all',
      start_date: '2026-11-01',
      end_date: '2026-11-30',
      ...filters,
    });
    expect(res.status).toBe(200);
    return res.json.map((c) => c.accounts_receivable_id).sort();
  };
  const both = [registered, rejected].sort();
  expect(await search(a, { payer_name: 'SILVA' })).toEqual([registered]);
  expect(await search(a, { payer_name: 'maría da' })).toEqual([registered]);
  expect(await search(a, { payer_name: 'cliente [sandbox' })).toEqual([rejected]);
  expect(await search(a, { payer_tax_id: '52998224725' })).toEqual(both);
  expect(await search(a, { value: 150.75 })).toEqual(both);
  expect(await search(a, { value: 150.76 })).toEqual([]);
  const ourNumber = asRegistered(receivableCallbacks(receiver, registered)[0]).payment_data.our_number;
  expect(await search(a, { our_number: ourNumber })).toEqual([registered]);
  expect(await search(a, { payer_name: 'silva', value: 150.75, payer_tax_id: '529.982.247-25' })).toEqual([registered]);
  expect(await search(b, { payer_name: 'silva' })).toEqual([]);
  const short = await a.api.post<Problem>('/api/v1/accounts-receivable/search', {
    state: 'all',
    start_date: '2026-11-01',
    end_date: '2026-11-30',
    payer_name: 'si',
  });
  expect(short.status).toBe(422);
  expect(short.json.errors?.map((e) => e.path)).toEqual(['/payer_name']);
});
