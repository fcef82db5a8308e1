import { randomUUID } from 'node:crypto';
import type {
  ConsultResult,
  Problem,
  ReceivableCreateItem,
  ReceivablesCreateResponse,
  SearchResultItem,
  SearchState,
} from '@payments/contracts';
import { queryRows } from '../support/db-probe';
import { clientPayload, receivablePayload } from '../support/fixtures';
import {
  isCancellationResult,
  isPaid,
  isRegistered,
  isRegistrationFailed,
  payAtSandbox,
  receivableCallbacks,
} from '../support/receivable-callbacks';
import { CallbackReceiver, waitFor } from '../support/receiver';
import {
  barcodeProblems,
  dueFactorOf,
  parseBarcode,
  parseBrCode,
  typeableLineProblems,
} from '@payments/test-support/slip-checks';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

// Contract behaviour of receivables the other files leave unverified: search by each state, payments
// by slip and by hand with the sandbox tariff, payment data checked against the charge it encodes,
// and the create endpoint's Idempotency-Key and size limits.

const FAST = { CALLBACK_RETRY_SCHEDULE_MS: '200,400,800', CALLBACK_POLL_INTERVAL_MS: '50', PROVIDER_RETRIES: '0' };

let system: TestSystem;
let receiver: CallbackReceiver;

beforeAll(async () => {
  system = await startSystem({ withReceivables: true, env: FAST });
  receiver = await new CallbackReceiver().start();
});
afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
});

/** A new tenant with one registered client (a second one whose charges the sandbox rejects, when asked). */
async function tenantWithClient(
  name: string,
): Promise<{ tenant: TestTenant; clientId: string; rejectedClientId: string }> {
  const tenant = await system.newTenant(name);
  const client = clientPayload();
  const rejected = clientPayload({ name: 'Cliente [sandbox:reject]' });
  expect((await tenant.api.postIdempotent('/api/v1/clients', [client, rejected])).status).toBe(201);
  return { tenant, clientId: client.client_id, rejectedClientId: rejected.client_id };
}

async function issue(tenant: TestTenant, items: ReceivableCreateItem[]): Promise<void> {
  const res = await tenant.api.postIdempotent<ReceivablesCreateResponse>('/api/v1/accounts-receivable', items);
  expect(res.status).toBe(202);
}

async function registeredData(id: string) {
  await waitFor(() => receivableCallbacks(receiver, id).some(isRegistered), 20_000, `registered callback of ${id}`);
  return receivableCallbacks(receiver, id).filter(isRegistered)[0].payment_data;
}

async function charges(tenantId: string): Promise<number> {
  const rows = await queryRows<{ n: string }>(
    system.databaseUrl,
    'select count(*) as n from receivables.receivables where tenant_id = $1',
    [tenantId],
  );
  return Number(rows[0].n);
}

const item = (clientId: string, overrides: Partial<ReceivableCreateItem> = {}) =>
  receivablePayload(clientId, receiver.url, overrides) as ReceivableCreateItem;

describe('search by state', () => {
  it('finds pending, approved, rejected and cancelled charges each under its own state, and all of them under "all"', async () => {
    const { tenant, clientId, rejectedClientId } = await tenantWithClient('States');
    const pending = item(clientId, { emission_date: '2026-06-04' });
    const approved = item(clientId, { emission_date: '2026-06-01', payment_method: 3 });
    const rejected = item(rejectedClientId, { emission_date: '2026-06-02' });
    const cancelled = item(clientId, { emission_date: '2026-06-03' });
    await issue(tenant, [pending, approved, rejected, cancelled, item(clientId, { emission_date: '2026-07-01' })]);
    await registeredData(cancelled.account_receivable_id);
    expect(
      (
        await tenant.api.postIdempotent(
          `/api/v1/accounts-receivable/${cancelled.account_receivable_id}/cancel`,
          undefined,
        )
      ).status,
    ).toBe(202);
    expect(
      (await payAtSandbox(system.sandboxUrl!, (await registeredData(approved.account_receivable_id)).our_number, 'pix'))
        .status,
    ).toBe(200);
    await waitFor(
      () => receivableCallbacks(receiver, rejected.account_receivable_id).some(isRegistrationFailed),
      20_000,
      'rejection',
    );
    await waitFor(
      () => receivableCallbacks(receiver, cancelled.account_receivable_id).some(isCancellationResult),
      20_000,
      'cancellation',
    );
    await waitFor(() => receivableCallbacks(receiver, approved.account_receivable_id).some(isPaid), 20_000, 'payment');
    await registeredData(pending.account_receivable_id);

    const search = async (state: SearchState) => {
      const res = await tenant.api.post<SearchResultItem[]>('/api/v1/accounts-receivable/search', {
        state,
        start_date: '2026-06-01',
        end_date: '2026-06-30',
      });
      expect(res.status).toBe(200);
      return res.json.map((r) => [r.accounts_receivable_id, r.status_payment, r.paymento_type]);
    };
    expect(await search('pending')).toEqual([[pending.account_receivable_id, 'Pendente', 'naodefinido']]);
    expect(await search('approved')).toEqual([[approved.account_receivable_id, 'Aprovada', 'Pix']]);
    expect(await search('rejected')).toEqual([[rejected.account_receivable_id, 'Rejeitada', 'naodefinido']]);
    expect(await search('cancelled')).toEqual([[cancelled.account_receivable_id, 'Cancelada', 'naodefinido']]);
    expect((await search('all')).map(([id]) => id)).toEqual(
      [approved, rejected, cancelled, pending].map((r) => r.account_receivable_id),
    );
  });
});

describe('payments with the sandbox tariff', () => {
  // apps/bank-sandbox/src/domain/money.ts: R$ 1.99 per slip, 0.99 % per PIX rounded half up to the cent, manual free.
  it.each([
    { method: 'boleto' as const, value: 150.75, pay: undefined, paid: 150.75, fee: 1.99, label: 'Boleto' },
    { method: 'manual' as const, value: 150.75, pay: 120.5, paid: 120.5, fee: 0, label: 'Manual' },
    { method: 'pix' as const, value: 50.5, pay: undefined, paid: 50.5, fee: 0.5, label: 'Pix' }, // 49.995 cents, half up
  ])(
    'pays a hybrid slip by $method: paid callback, consult and search show amount $paid, fee $fee, type $label',
    async ({ method, value, pay, paid, fee, label }) => {
      const { tenant, clientId } = await tenantWithClient(`Pay ${method}`);
      const charge = item(clientId, { payment_method: 1, value, emission_date: '2026-05-05', items: [] });
      await issue(tenant, [charge]);
      const data = await registeredData(charge.account_receivable_id);
      const settled = await payAtSandbox(system.sandboxUrl!, data.our_number, method, pay);
      expect(settled.status).toBe(200);
      expect(settled.charge).toMatchObject({
        status: 'paid',
        method,
        amount_paid_cents: Math.round(paid * 100),
        fee_cents: Math.round(fee * 100),
      });

      await waitFor(
        () => receivableCallbacks(receiver, charge.account_receivable_id).some(isPaid),
        20_000,
        'paid callback',
      );
      const callback = receivableCallbacks(receiver, charge.account_receivable_id).filter(isPaid);
      expect(callback).toHaveLength(1);
      expect(callback[0]).toEqual({
        success: true,
        type: 'paid',
        accounts_receivable_id: charge.account_receivable_id,
        payment_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/),
        amount_paid: paid,
        fee_amount: fee,
        payment_type: label,
      });
      const consult = await tenant.api.post<ConsultResult>(
        `/api/v1/accounts-receivable/${charge.account_receivable_id}/consult-transaction`,
      );
      expect(consult.json).toEqual({
        accounts_receivable_id: charge.account_receivable_id,
        client_name: 'Maria da Silva',
        status_payment: 'Aprovada',
        payment_type: label,
        payment_date: callback[0].payment_date,
        amount_due: value,
        amount_paid: paid,
        fee_amount: fee,
      });
      const search = await tenant.api.post<SearchResultItem[]>('/api/v1/accounts-receivable/search', {
        state: 'approved',
        start_date: '2026-05-05',
        end_date: '2026-05-05',
      });
      expect(search.json).toEqual([
        expect.objectContaining({
          accounts_receivable_id: charge.account_receivable_id,
          paymento_type: label,
          amount_paid: paid,
          fee_amount: fee,
          payment_date: callback[0].payment_date,
        }),
      ]);
    },
  );

  it('refuses to pay a PIX-only charge by slip (422) and keeps it pending', async () => {
    const { tenant, clientId } = await tenantWithClient('Pix by slip');
    const charge = item(clientId, { payment_method: 3 });
    await issue(tenant, [charge]);
    const data = await registeredData(charge.account_receivable_id);
    expect((await payAtSandbox(system.sandboxUrl!, data.our_number, 'boleto')).status).toBe(422);
    const consult = await tenant.api.post<ConsultResult>(
      `/api/v1/accounts-receivable/${charge.account_receivable_id}/consult-transaction`,
    );
    expect(consult.json).toMatchObject({
      status_payment: 'Pendente',
      payment_type: 'naodefinido',
      amount_paid: 0,
      fee_amount: 0,
      payment_date: null,
    });
  });
});

describe('payment data encodes the charge', () => {
  it('puts each slip’s due-date factor and value in its barcode, and the value in the BR Code (field 54)', async () => {
    const { tenant, clientId } = await tenantWithClient('Payment data');
    const slips = [
      item(clientId, { due_date: '2026-12-15', value: 150.75 }),
      item(clientId, { due_date: '2027-06-30', value: 1234.56 }),
      item(clientId, {
        due_date: '2030-01-31',
        value: 9.9,
        discount_type: 'ValorFixoAteDataInformada',
        discount_value: 1,
        discount_date: '2030-01-10',
      }),
    ];
    const pix = [
      item(clientId, { payment_method: 3, value: 89.9 }),
      item(clientId, { payment_method: 3, value: 1_000_000 }),
    ];
    await issue(tenant, [...slips, ...pix]);

    for (const slip of slips) {
      const data = await registeredData(slip.account_receivable_id);
      const cents = Math.round(slip.value * 100);
      expect({
        id: slip.account_receivable_id,
        problems: barcodeProblems(data.barcode, { amountCents: cents, dueDate: slip.due_date }),
      }).toEqual({ id: slip.account_receivable_id, problems: [] });
      expect(parseBarcode(data.barcode)).toMatchObject({ dueFactor: dueFactorOf(slip.due_date), valueCents: cents });
      expect(typeableLineProblems(data.typeable_line, data.barcode)).toEqual([]);
      expect(parseBrCode(data.pix_copy_and_paste).amount).toBe(slip.value.toFixed(2)); // the slip's PIX pays the same value
    }
    // Independent arithmetic for one: 2026-12-15 is 661 days after 2025-02-22 (factor 1000).
    expect(parseBarcode((await registeredData(slips[0].account_receivable_id)).barcode).dueFactor).toBe('1661');
    for (const p of pix) {
      const data = await registeredData(p.account_receivable_id);
      expect(data.barcode).toBe('');
      expect(data.typeable_line).toBe('');
      expect(parseBrCode(data.pix_copy_and_paste).amount).toBe(p.value.toFixed(2));
    }
  });
});

describe('payment data on request', () => {
  const paymentDataPath = (id: string) => `/api/v1/accounts-receivable/${id}/payment-data`;

  it('answers the payment data of the registered callback, field for field, by the id in any spelling', async () => {
    const { tenant, clientId } = await tenantWithClient('Payment data on request');
    const slip = item(clientId);
    const pix = item(clientId, { payment_method: 3 });
    await issue(tenant, [slip, pix]);
    for (const charge of [slip, pix]) {
      const carried = await registeredData(charge.account_receivable_id);
      const res = await tenant.api.send('GET', paymentDataPath(charge.account_receivable_id.toUpperCase()));
      expect(res.status).toBe(200);
      expect(res.json).toEqual(carried);
    }
    // Paid, it still answers the same.
    const carried = await registeredData(pix.account_receivable_id);
    expect((await payAtSandbox(system.sandboxUrl!, carried.our_number, 'pix')).status).toBe(200);
    await waitFor(() => receivableCallbacks(receiver, pix.account_receivable_id).some(isPaid), 20_000, 'payment');
    expect((await tenant.api.send('GET', paymentDataPath(pix.account_receivable_id))).json).toEqual(carried);
  });

  it('is 404 problem+json while not registered, for a rejected charge and for another tenant; 401 without a token', async () => {
    const { tenant, clientId, rejectedClientId } = await tenantWithClient('Payment data refusals');
    const failing = clientPayload({ name: 'Cliente [sandbox:fail]' });
    expect((await tenant.api.postIdempotent('/api/v1/clients', [failing])).status).toBe(201);
    const registered = item(clientId);
    const rejected = item(rejectedClientId);
    const waiting = item(failing.client_id);
    await issue(tenant, [registered, rejected, waiting]);
    await registeredData(registered.account_receivable_id);
    await waitFor(
      () => receivableCallbacks(receiver, rejected.account_receivable_id).some(isRegistrationFailed),
      20_000,
      'rejection',
    );
    const other = await system.newTenant('Payment data, other tenant');
    const refusals = [
      await tenant.api.send<Problem>('GET', paymentDataPath(waiting.account_receivable_id)),
      await tenant.api.send<Problem>('GET', paymentDataPath(rejected.account_receivable_id)),
      await tenant.api.send<Problem>('GET', paymentDataPath(randomUUID())),
      await other.api.send<Problem>('GET', paymentDataPath(registered.account_receivable_id)),
    ];
    for (const res of refusals) {
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.json).toMatchObject({ status: 404, code: 'not_found' });
    }
    const anonymous = await system.api.send<Problem>('GET', paymentDataPath(registered.account_receivable_id));
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toMatchObject({ code: 'unauthorized' });
    const malformed = await tenant.api.send<Problem>('GET', paymentDataPath('not-a-uuid'));
    expect(malformed.status).toBe(422);
    expect(malformed.json.errors).toEqual([expect.objectContaining({ in: 'path', path: 'uuid' })]);
  });
});

describe('a receivable as issued', () => {
  const detailPath = (id: string) => `/api/v1/accounts-receivable/${id}`;

  it('answers its ids as sent, amount, dates and the payer printed on the slip, even after the client changed', async () => {
    const tenant = await system.newTenant('Receivable as issued');
    const client = clientPayload({ name: 'Joana Gonçalves', cnpj_cpf: '529.982.247-25' });
    expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
    const slip = item(client.client_id, {
      value: 1234.56,
      emission_date: '2026-11-02',
      due_date: '2026-12-10',
      account_receivable_id: randomUUID().toUpperCase(),
    });
    await issue(tenant, [slip]);
    const expected = {
      accounts_receivable_id: slip.account_receivable_id,
      client_id: client.client_id,
      payment_slip_id: slip.payment_slip_id,
      payment_method: 1,
      status_payment: 'Pendente',
      value: 1234.56,
      emission_date: '2026-11-02',
      due_date: '2026-12-10',
      payer: { name: 'Joana Gonçalves', tax_id: '52998224725' },
    };
    const first = await tenant.api.send('GET', detailPath(slip.account_receivable_id.toLowerCase()));
    expect(first.status).toBe(200);
    expect(first.json).toEqual(expected);
    const renamed = await tenant.api.send(
      'PUT',
      `/api/v1/clients/${client.client_id}`,
      { ...client, name: 'Joana G. Silva' },
      {
        'idempotency-key': randomUUID(),
      },
    );
    expect(renamed.status).toBe(200);
    expect((await tenant.api.send('GET', detailPath(slip.account_receivable_id))).json).toEqual(expected);
  });

  it('is 404 problem+json for another tenant and an unknown id, 401 without a token, 422 for a malformed id', async () => {
    const { tenant, clientId } = await tenantWithClient('Receivable as issued, refusals');
    const charge = item(clientId);
    await issue(tenant, [charge]);
    const other = await system.newTenant('Receivable as issued, other tenant');
    for (const res of [
      await other.api.send<Problem>('GET', detailPath(charge.account_receivable_id)),
      await tenant.api.send<Problem>('GET', detailPath(randomUUID())),
    ]) {
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.json).toMatchObject({ code: 'not_found' });
    }
    expect((await system.api.send<Problem>('GET', detailPath(charge.account_receivable_id))).status).toBe(401);
    const malformed = await tenant.api.send<Problem>('GET', detailPath('not-a-uuid'));
    expect(malformed.status).toBe(422);
    expect(malformed.json.errors).toEqual([expect.objectContaining({ in: 'path', path: 'uuid' })]);
  });
});

describe('create: ids that exist already, ids twice in a batch', () => {
  it('names in the 202 the ids that already existed, as first spelled, and creates only the new ones', async () => {
    const { tenant, clientId } = await tenantWithClient('Existing ids');
    const first = item(clientId, { account_receivable_id: `aBcD${randomUUID().slice(4)}` });
    const created = await tenant.api.postIdempotent<ReceivablesCreateResponse>('/api/v1/accounts-receivable', [first]);
    expect(created.status).toBe(202);
    expect(created.json.existing).toEqual([]);

    const fresh = item(clientId);
    const again = { ...first, account_receivable_id: first.account_receivable_id.toUpperCase() };
    const res = await tenant.api.postIdempotent<ReceivablesCreateResponse>('/api/v1/accounts-receivable', [
      fresh,
      again,
    ]);
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ status: 'success', existing: [first.account_receivable_id] });
    expect(res.json.message).toMatch(/^1 receivable\(s\).*1 already existed/);
    expect(await charges(tenant.tenantId)).toBe(2);
  });

  it('refuses an id twice in one batch, in any spelling, with 422 naming both items, and stores nothing', async () => {
    const { tenant, clientId } = await tenantWithClient('Twice in a batch');
    const charge = item(clientId);
    const twin = item(clientId, { account_receivable_id: charge.account_receivable_id.toUpperCase(), value: 20 });
    const res = await tenant.api.postIdempotent<Problem>('/api/v1/accounts-receivable', [charge, item(clientId), twin]);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.json).toMatchObject({ code: 'validation_failed' });
    expect(res.json.errors?.map((e) => e.path)).toEqual(['/0/account_receivable_id', '/2/account_receivable_id']);
    for (const e of res.json.errors ?? []) expect(e.message).toContain('items 0, 2');
    expect(await charges(tenant.tenantId)).toBe(0);
  });
});

describe('reads ignore the Idempotency-Key', () => {
  it('neither stores nor locks a key on search, consult, history or payment data: the same key just runs again', async () => {
    const { tenant, clientId } = await tenantWithClient('Keyless reads');
    const first = item(clientId, { emission_date: '2026-08-03' });
    await issue(tenant, [first]);
    await registeredData(first.account_receivable_id);
    const key = randomUUID();
    const window = { state: 'all', start_date: '2026-08-01', end_date: '2026-08-31' };
    const search = (body: object, k: string = key) =>
      tenant.api.post<SearchResultItem[]>('/api/v1/accounts-receivable/search', body, { 'idempotency-key': k });

    const before = await search(window);
    expect(before.status).toBe(200);
    expect(before.json.map((r) => r.accounts_receivable_id)).toEqual([first.account_receivable_id]);
    const second = item(clientId, { emission_date: '2026-08-04' });
    await issue(tenant, [second]);
    // The same key and body: a new search (no replay of the first answer), which finds the new charge.
    const again = await search(window);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.json.map((r) => r.accounts_receivable_id)).toEqual([
      first.account_receivable_id,
      second.account_receivable_id,
    ]);
    // The same key with another body is no reuse (422), and a key of no valid shape is no 400.
    expect((await search({ ...window, state: 'pending' })).status).toBe(200);
    expect((await search(window, 'has space')).status).toBe(200);
    for (const path of ['consult-transaction', 'history', 'payment-data']) {
      const method = path === 'consult-transaction' ? 'POST' : 'GET';
      const url = `/api/v1/accounts-receivable/${first.account_receivable_id}/${path}`;
      const answers = [
        await tenant.api.send(method, url, undefined, { 'idempotency-key': key }),
        await tenant.api.send(method, url, undefined, { 'idempotency-key': key }),
      ];
      expect(answers.map((a) => [a.status, a.headers.get('idempotent-replayed')])).toEqual([
        [200, null],
        [200, null],
      ]);
    }
    const stored = await queryRows<{ path: string }>(
      system.databaseUrl,
      'select path from gateway.idempotency_keys where tenant_id = $1 order by path',
      [tenant.tenantId],
    );
    // The client's and the two creates' keys; no read's.
    expect(stored.map((r) => r.path)).toEqual([
      '/api/v1/accounts-receivable',
      '/api/v1/accounts-receivable',
      '/api/v1/clients',
    ]);
    const withKey = await queryRows(system.databaseUrl, 'select 1 from gateway.idempotency_keys where key = $1', [key]);
    expect(withKey).toEqual([]);
  });
});

describe('create: Idempotency-Key and size limits', () => {
  it('requires an Idempotency-Key (400 naming the header) and stores nothing', async () => {
    const { tenant, clientId } = await tenantWithClient('No key');
    const res = await tenant.api.post<Problem>('/api/v1/accounts-receivable', [item(clientId)]);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.json).toMatchObject({
      code: 'idempotency_key_missing',
      errors: [{ in: 'header', path: 'Idempotency-Key' }],
    });
    expect(await charges(tenant.tenantId)).toBe(0);
  });

  it('replays a create sent again with its key: the same 202, Idempotent-Replayed, one charge and one callback', async () => {
    const { tenant, clientId } = await tenantWithClient('Replay');
    const charge = item(clientId);
    const key = randomUUID();
    const first = await tenant.api.postIdempotent<ReceivablesCreateResponse>(
      '/api/v1/accounts-receivable',
      [charge],
      key,
    );
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    await registeredData(charge.account_receivable_id);
    const again = await tenant.api.postIdempotent<ReceivablesCreateResponse>(
      '/api/v1/accounts-receivable',
      [charge],
      key,
    );
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    await new Promise((r) => setTimeout(r, 1_000)); // time for a second registration to show, were there one
    expect(await charges(tenant.tenantId)).toBe(1);
    expect(receivableCallbacks(receiver, charge.account_receivable_id)).toHaveLength(1);
  });

  it('refuses 1,001 items with 413 saying the limit, and stores nothing', async () => {
    const { tenant, clientId } = await tenantWithClient('Too many');
    const batch = Array.from({ length: 1_001 }, () => item(clientId, { items: [] }));
    const body = JSON.stringify(batch);
    expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024); // the item count, not the size, is what is refused
    const res = await tenant.api.postIdempotent<Problem>('/api/v1/accounts-receivable', body);
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.json).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect(res.json.detail).toMatch(/1000 items/);
    expect(await charges(tenant.tenantId)).toBe(0);
  });

  it('refuses a body over 1 MiB with 413, and stores nothing', async () => {
    const { tenant, clientId } = await tenantWithClient('Too large');
    const lines = Array.from({ length: 100 }, (_, i) => ({
      description: `${i} `.padEnd(500, 'x'),
      quantity: 1,
      price: 1,
    }));
    const batch = Array.from({ length: 25 }, () => item(clientId, { items: lines, value: 100 }));
    const body = JSON.stringify(batch);
    expect(Buffer.byteLength(body)).toBeGreaterThan(1024 * 1024);
    const res = await tenant.api.postIdempotent<Problem>('/api/v1/accounts-receivable', body);
    expect(res.status).toBe(413);
    expect(res.json).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect(await charges(tenant.tenantId)).toBe(0);
  });
});
