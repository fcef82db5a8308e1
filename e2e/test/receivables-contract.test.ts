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
