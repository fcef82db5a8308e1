import { createHmac, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { download } from '../support/download';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { barcodeProblems, brCodeProblems, decodeQrPng, typeableLineProblems } from '@payments/test-support/slip-checks';
import { queryRows } from '../support/db-probe';
import { findSeries, scrape } from '../support/prometheus';
import { MetricNames } from '@payments/metrics';
import type { ApiResponse } from '../support/api-client';
import {
  asRegistered,
  isCancellationResult,
  isPaid,
  isRegistered,
  receivableCallbacks,
  type ReceivableCallback,
} from '../support/receivable-callbacks';
import type {
  CancelResponse,
  ConsultResult,
  Problem,
  ReceivablesCreateResponse,
  SearchResultItem,
} from '@payments/contracts';

const FAST = { CALLBACK_RETRY_SCHEDULE_MS: '200,400,800', CALLBACK_POLL_INTERVAL_MS: '50', PROVIDER_RETRIES: '0' };

let system: TestSystem;
let tenant: TestTenant;
let receiver: CallbackReceiver;
let clientId: string;

const callbacks = (filter: (c: ReceivableCallback) => boolean = () => true): ReceivableCallback[] =>
  receivableCallbacks(receiver).filter(filter);
const callbacksFor = (id: string) => receivableCallbacks(receiver, id);
const isCancelled = (c: ReceivableCallback) => isCancellationResult(c) && c.status === 'success';

async function setBehaviour(mode: string): Promise<void> {
  const res = await fetch(`${system.sandboxUrl}/sandbox/behaviour`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mode }),
  });
  expect(res.status).toBe(200);
}

async function consult(t: TestTenant, id: string) {
  return t.api.post<ConsultResult>(`/api/v1/accounts-receivable/${id}/consult-transaction`);
}

beforeAll(async () => {
  system = await startSystem({ withReceivables: true, env: FAST });
  tenant = await system.newTenant('Receivables');
  receiver = await new CallbackReceiver().start();
  const client = clientPayload();
  clientId = client.client_id;
  expect((await tenant.api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
});
afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
});

it('registers a batch of 50 mixed slip and PIX charges: 50 signed callbacks with data a bank app accepts', async () => {
  const batch = Array.from({ length: 50 }, (_, i) =>
    receivablePayload(clientId, receiver.url, {
      payment_method: i % 2 === 0 ? 1 : 3,
      value: 10 + i + 0.99,
      items: [],
      due_date: `2026-12-${String(1 + (i % 28)).padStart(2, '0')}`,
    }),
  );
  const res = await tenant.api.postIdempotent<ReceivablesCreateResponse>('/api/v1/accounts-receivable', batch);
  expect(res.status).toBe(202);
  expect(res.json.status).toBe('success');
  expect(res.json.message).toMatch(/processed/);

  const ids = new Set(batch.map((b) => b.account_receivable_id));
  await waitFor(
    () => callbacks((c) => ids.has(c.accounts_receivable_id) && isRegistered(c)).length === 50,
    30_000,
    '50 registered callbacks',
  );
  for (const item of batch) {
    const received = receiver.received.filter(
      (r) => (JSON.parse(r.body) as ReceivableCallback).accounts_receivable_id === item.account_receivable_id,
    );
    expect(received).toHaveLength(1);
    expect(new Webhook(tenant.signingSecret).verify(received[0].body, received[0].headers)).toBeTruthy();
    const cb = JSON.parse(received[0].body) as ReceivableCallback;
    expect(cb).toMatchObject({ success: true, type: 'registered', accounts_receivable_id: item.account_receivable_id });
    const data = asRegistered(cb).payment_data;
    expect(data.our_number).toMatch(/^\d+$/);
    expect(brCodeProblems(data.pix_copy_and_paste)).toEqual([]);
    if (item.payment_method === 1) {
      expect(barcodeProblems(data.barcode)).toEqual([]);
      expect(typeableLineProblems(data.typeable_line, data.barcode)).toEqual([]);
      expect(data.barcode.slice(9, 19)).toBe(String(Math.round(item.value * 100)).padStart(10, '0'));
    } else {
      expect(data.barcode).toBe('');
      expect(data.typeable_line).toBe('');
    }
  }
  // QR image and PDF of a few of them (each fetch is real HTTP to the sandbox).
  for (const cb of callbacks((c) => ids.has(c.accounts_receivable_id))
    .filter(isRegistered)
    .slice(0, 6)) {
    const png = Buffer.from(await (await fetch(cb.payment_data.qrcode_image)).arrayBuffer());
    expect(decodeQrPng(png)).toBe(cb.payment_data.pix_copy_and_paste);
    const pdf = await download(cb.payment_data.pdf);
    expect(pdf).toMatchObject({ status: 200, magic: '%PDF-' });
    expect(pdf.headers.get('content-type')).toContain('application/pdf');
  }
  const consulted = await consult(tenant, batch[0].account_receivable_id);
  expect(consulted.status).toBe(200);
  expect(consulted.json).toEqual({
    accounts_receivable_id: batch[0].account_receivable_id,
    client_name: 'Maria da Silva',
    status_payment: 'Pendente',
    payment_type: 'naodefinido',
    payment_date: null,
    amount_due: 10.99,
    amount_paid: 0,
    fee_amount: 0,
  });
});

it('reports a provider rejection with success false and state Rejeitada', async () => {
  const rejected = clientPayload({ name: 'Cliente [sandbox:reject]' });
  await tenant.api.postIdempotent('/api/v1/clients', [rejected]);
  const item = receivablePayload(rejected.client_id, receiver.url);
  expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item])).status).toBe(202);
  await waitFor(() => callbacksFor(item.account_receivable_id).length === 1, 15_000, 'rejection callback');
  const cb = callbacksFor(item.account_receivable_id)[0];
  expect(cb).toMatchObject({
    success: false,
    type: 'registered',
    accounts_receivable_id: item.account_receivable_id,
    error: { code: expect.any(String), message: expect.any(String) },
  });
  expect((await consult(tenant, item.account_receivable_id)).json).toMatchObject({ status_payment: 'Rejeitada' });
  expect(
    (await tenant.api.postIdempotent(`/api/v1/accounts-receivable/${item.account_receivable_id}/cancel`, undefined))
      .status,
  ).toBe(409);
});

it('keeps charges pending while the provider is down and registers them once it is back', async () => {
  await setBehaviour('down');
  const item = receivablePayload(clientId, receiver.url, { payment_method: 3 });
  try {
    expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item])).status).toBe(202);
    await new Promise((r) => setTimeout(r, 2500));
    expect(callbacksFor(item.account_receivable_id)).toHaveLength(0);
    expect((await consult(tenant, item.account_receivable_id)).json).toMatchObject({ status_payment: 'Pendente' });
  } finally {
    await setBehaviour('normal');
  }
  await waitFor(() => callbacksFor(item.account_receivable_id).length === 1, 30_000, 'registration after recovery');
  expect(callbacksFor(item.account_receivable_id)[0]).toMatchObject({ success: true, type: 'registered' });
});

it('pays a charge at the provider: approved in search and consult, and a paid callback', async () => {
  const item = receivablePayload(clientId, receiver.url, {
    payment_method: 3,
    value: 200,
    emission_date: '2026-10-05',
  });
  await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item]);
  await waitFor(() => callbacksFor(item.account_receivable_id).length === 1, 15_000, 'registered');
  const ourNumber = asRegistered(callbacksFor(item.account_receivable_id)[0]).payment_data.our_number;
  const pay = await fetch(`${system.sandboxUrl}/sandbox/charges/${ourNumber}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ method: 'pix' }),
  });
  expect(pay.status).toBe(200);
  await waitFor(() => callbacksFor(item.account_receivable_id).some(isPaid), 15_000, 'paid callback');
  const paid = callbacksFor(item.account_receivable_id).find(isPaid)!;
  expect(paid).toMatchObject({ success: true, type: 'paid', amount_paid: 200, fee_amount: 1.98, payment_type: 'Pix' });
  expect(paid.payment_date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/);

  const consulted = await consult(tenant, item.account_receivable_id);
  expect(consulted.json).toMatchObject({
    status_payment: 'Aprovada',
    payment_type: 'Pix',
    amount_paid: 200,
    fee_amount: 1.98,
    amount_due: 200,
    payment_date: paid.payment_date,
  });
  const search = await tenant.api.post<SearchResultItem[]>('/api/v1/accounts-receivable/search', {
    state: 'approved',
    start_date: '2026-10-01',
    end_date: '2026-10-31',
  });
  expect(search.status).toBe(200);
  expect(search.json).toEqual([
    expect.objectContaining({
      accounts_receivable_id: item.account_receivable_id,
      status_payment: 'Aprovada',
      paymento_type: 'Pix',
      amount_paid: 200,
    }),
  ]);
  expect(search.json[0]).not.toHaveProperty('payment_type');
  // Paid: it can no longer be cancelled.
  const cancel = await tenant.api.postIdempotent(
    `/api/v1/accounts-receivable/${item.account_receivable_id}/cancel`,
    undefined,
  );
  expect(cancel.status).toBe(409);
});

it('cancels a registered charge: 202, a success callback, Cancelada; a second cancel is 409', async () => {
  const item = receivablePayload(clientId, receiver.url);
  await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item]);
  await waitFor(() => callbacksFor(item.account_receivable_id).length === 1, 15_000, 'registered');
  const cancel = await tenant.api.postIdempotent<CancelResponse>(
    `/api/v1/accounts-receivable/${item.account_receivable_id}/cancel`,
    undefined,
  );
  expect(cancel.status).toBe(202);
  expect(cancel.json).toMatchObject({ status: 'success', message: expect.stringMatching(/cancel/) });
  await waitFor(() => callbacksFor(item.account_receivable_id).some(isCancelled), 15_000, 'cancellation callback');
  expect(callbacksFor(item.account_receivable_id).find(isCancelled)).toEqual({
    status: 'success',
    accounts_receivable_id: item.account_receivable_id,
    message: expect.any(String),
  });
  expect((await consult(tenant, item.account_receivable_id)).json).toMatchObject({ status_payment: 'Cancelada' });
  const again = await tenant.api.postIdempotent(
    `/api/v1/accounts-receivable/${item.account_receivable_id}/cancel`,
    undefined,
  );
  expect(again.status).toBe(409);
  expect(again.json).toMatchObject({ code: 'conflict' });
  // The charge is cancelled at the provider too: paying it is refused.
  const ourNumber = asRegistered(callbacksFor(item.account_receivable_id)[0]).payment_data.our_number;
  const pay = await fetch(`${system.sandboxUrl}/sandbox/charges/${ourNumber}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ method: 'boleto' }),
  });
  expect(pay.status).toBe(409);
});

it('cancels a charge still waiting for registration, and never registers it', async () => {
  await setBehaviour('down');
  const item = receivablePayload(clientId, receiver.url);
  try {
    await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item]);
    const first = await tenant.api.postIdempotent(
      `/api/v1/accounts-receivable/${item.account_receivable_id}/cancel`,
      undefined,
    );
    expect(first.status).toBe(202);
    await waitFor(() => callbacksFor(item.account_receivable_id).length === 1, 15_000, 'cancellation callback');
  } finally {
    await setBehaviour('normal');
  }
  await new Promise((r) => setTimeout(r, 2500));
  expect(callbacksFor(item.account_receivable_id)).toEqual([
    { status: 'success', accounts_receivable_id: item.account_receivable_id, message: expect.any(String) },
  ]);
  expect((await consult(tenant, item.account_receivable_id)).json).toMatchObject({ status_payment: 'Cancelada' });
});

it('answers 202 again to a cancel already queued, and cancels once', async () => {
  const item = receivablePayload(clientId, receiver.url);
  await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item]);
  await waitFor(() => callbacksFor(item.account_receivable_id).length === 1, 15_000, 'registered');
  await setBehaviour('down'); // the provider cannot cancel for now: the cancellation stays queued
  try {
    const first = await tenant.api.postIdempotent(
      `/api/v1/accounts-receivable/${item.account_receivable_id}/cancel`,
      undefined,
    );
    const repeat = await tenant.api.postIdempotent(
      `/api/v1/accounts-receivable/${item.account_receivable_id}/cancel`,
      undefined,
    );
    expect([first.status, repeat.status]).toEqual([202, 202]);
    await new Promise((r) => setTimeout(r, 1000));
    expect(callbacksFor(item.account_receivable_id)).toHaveLength(1);
    expect((await consult(tenant, item.account_receivable_id)).json).toMatchObject({ status_payment: 'Pendente' });
  } finally {
    await setBehaviour('normal');
  }
  await waitFor(() => callbacksFor(item.account_receivable_id).length === 2, 20_000, 'cancellation callback');
  await new Promise((r) => setTimeout(r, 1500));
  expect(callbacksFor(item.account_receivable_id).filter(isCancelled)).toHaveLength(1);
  expect((await consult(tenant, item.account_receivable_id)).json).toMatchObject({ status_payment: 'Cancelada' });
});

it('creates an account_receivable_id once: resending it registers and calls back nothing new', async () => {
  const item = receivablePayload(clientId, receiver.url);
  await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item]);
  await waitFor(() => callbacksFor(item.account_receivable_id).length === 1, 15_000, 'registered');
  // Sent again, in a request of its own and then in another, beside a new charge: only the new one
  // is created, and the answer names the one that existed. (Twice within one batch is a 422.)
  const again = await tenant.api.postIdempotent<ReceivablesCreateResponse>('/api/v1/accounts-receivable', [item]);
  expect(again.status).toBe(202);
  expect(again.json.message).toMatch(/already existed/);
  const other = receivablePayload(clientId, receiver.url);
  const mixed = await tenant.api.postIdempotent<ReceivablesCreateResponse>('/api/v1/accounts-receivable', [
    { ...item },
    other,
  ]);
  expect(mixed.status).toBe(202);
  expect(mixed.json.existing).toEqual([item.account_receivable_id]);
  await waitFor(() => callbacksFor(other.account_receivable_id).length === 1, 15_000, 'the new one registered');
  await new Promise((r) => setTimeout(r, 1500));
  expect(callbacksFor(item.account_receivable_id)).toHaveLength(1);
  const rows = await queryRows<{ n: string }>(
    system.databaseUrl,
    'select count(*) as n from receivables.receivables where tenant_id = $1 and account_receivable_id = $2',
    [tenant.tenantId, item.account_receivable_id],
  );
  expect(Number(rows[0].n)).toBe(1);
});

describe('tenancy', () => {
  it("answers 404 for another tenant's receivable on cancel and consult, and keeps it out of search", async () => {
    const item = receivablePayload(clientId, receiver.url, { emission_date: '2026-09-09' });
    await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item]);
    const other = await system.newTenant('Other');
    expect((await consult(other, item.account_receivable_id)).status).toBe(404);
    expect(
      (await other.api.postIdempotent(`/api/v1/accounts-receivable/${item.account_receivable_id}/cancel`, undefined))
        .status,
    ).toBe(404);
    const search = await other.api.post<SearchResultItem[]>('/api/v1/accounts-receivable/search', {
      state: 'all',
      start_date: '2026-09-01',
      end_date: '2026-09-30',
    });
    expect(search.json).toEqual([]);
    // Nor can it charge the first tenant's client.
    const stolen = await other.api.postIdempotent<Problem>('/api/v1/accounts-receivable', [
      receivablePayload(clientId, receiver.url),
    ]);
    expect(stolen.status).toBe(422);
    expect(stolen.json.errors).toEqual([expect.objectContaining({ path: '/0/client_id' })]);
  });
});

describe('bad input', () => {
  it('names every bad field of a create batch and stores nothing', async () => {
    const t = await system.newTenant('Bad input');
    const res = await t.api.postIdempotent<Problem>('/api/v1/accounts-receivable', [
      receivablePayload(randomUUID(), receiver.url),
      receivablePayload(randomUUID(), 'ftp://example.com', {
        payment_method: 2,
        value: 10.001,
        due_date: '2026-02-30',
      }),
      receivablePayload(randomUUID(), receiver.url, {
        discount_type: 'ValorFixoAteDataInformada',
        discount_value: 500,
        discount_date: '2028-01-01', // after the due date
      }),
    ]);
    expect(res.status).toBe(422);
    const paths = (res.json.errors ?? []).map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/1/url_callback',
        '/1/payment_method',
        '/1/value',
        '/1/due_date',
        '/2/discount_value',
        '/2/discount_date',
      ]),
    );
    const rows = await queryRows<{ n: string }>(
      system.databaseUrl,
      'select count(*) as n from receivables.receivables where tenant_id = $1',
      [t.tenantId],
    );
    expect(Number(rows[0].n)).toBe(0);
  });

  it('refuses charges for clients that are not registered (422 naming the item), storing nothing', async () => {
    const item = receivablePayload(clientId, receiver.url);
    const res = await tenant.api.postIdempotent<Problem>('/api/v1/accounts-receivable', [
      item,
      receivablePayload(randomUUID(), receiver.url),
    ]);
    expect(res.status).toBe(422);
    expect(res.json.errors).toEqual([expect.objectContaining({ path: '/1/client_id' })]);
    expect((await consult(tenant, item.account_receivable_id)).status).toBe(404);
  });

  it('validates search and the path ids', async () => {
    const reversed = await tenant.api.post<Problem>('/api/v1/accounts-receivable/search', {
      state: 'all',
      start_date: '2026-12-01',
      end_date: '2026-11-01',
    });
    expect(reversed.status).toBe(422);
    expect((reversed.json.errors ?? []).map((e) => e.path)).toContain('/end_date');
    const badState = await tenant.api.post<Problem>('/api/v1/accounts-receivable/search', {
      state: 'paid',
      start_date: '2026-11-01',
    });
    expect((badState.json.errors ?? []).map((e) => e.path).sort()).toEqual(['/end_date', '/state']);
    expect((await tenant.api.post('/api/v1/accounts-receivable/not-a-uuid/consult-transaction')).status).toBe(422);
    expect((await tenant.api.postIdempotent('/api/v1/accounts-receivable/not-a-uuid/cancel', undefined)).status).toBe(
      422,
    );
    expect(
      (
        await tenant.api.post('/api/v1/accounts-receivable/search', {
          state: 'all',
          start_date: '2026-01-01',
          end_date: '2026-12-31',
          cursor: 'junk',
        })
      ).status,
    ).toBe(422);
    expect((await tenant.api.post(`/api/v1/accounts-receivable/${randomUUID()}/cancel`)).status).toBe(400); // no Idempotency-Key
  });
});

it('pages search results by emission date with X-Next-Cursor, inclusive of both dates', async () => {
  const t = await system.newTenant('Pager');
  const c = clientPayload();
  await t.api.postIdempotent('/api/v1/clients', [c]);
  const dates = ['2026-08-01', '2026-08-01', '2026-08-15', '2026-08-31', '2026-09-01', '2026-07-31'];
  const batch = dates.map((d) =>
    receivablePayload(c.client_id, receiver.url, { emission_date: d, due_date: '2026-12-31' }),
  );
  await t.api.postIdempotent('/api/v1/accounts-receivable', batch);
  const seen: SearchResultItem[] = [];
  let cursor: string | null = null;
  do {
    const body: Record<string, unknown> = {
      state: 'all',
      start_date: '2026-08-01',
      end_date: '2026-08-31',
      limit: 2,
      ...(cursor ? { cursor } : {}),
    };
    const res: ApiResponse<SearchResultItem[]> = await t.api.post('/api/v1/accounts-receivable/search', body);
    expect(res.status).toBe(200);
    seen.push(...res.json);
    cursor = res.headers.get('x-next-cursor');
  } while (cursor);
  const expected = batch
    .filter((b) => b.emission_date >= '2026-08-01' && b.emission_date <= '2026-08-31')
    .sort(
      (a, b) =>
        a.emission_date.localeCompare(b.emission_date) ||
        a.account_receivable_id.localeCompare(b.account_receivable_id),
    )
    .map((b) => b.account_receivable_id);
  expect(seen.map((s) => s.accounts_receivable_id)).toEqual(expected);
});

describe('provider webhook endpoint (receivables-svc)', () => {
  // The sandbox's scheme (Standard Webhooks, PROVIDER_WEBHOOK_SECRET's development default as raw key),
  // crafted here with the reference library as a forger or a replaying attacker would.
  const SANDBOX_SECRET = 'sandbox-webhook-secret';
  const url = () => `http://127.0.0.1:${system.receivables!.port}/provider/webhooks/bank-sandbox`;
  const signer = (secret = SANDBOX_SECRET) => new Webhook(Buffer.from(secret), { format: 'raw' });
  const signed = (body: string, eventId: string, opts: { at?: Date; secret?: string } = {}) => {
    const at = opts.at ?? new Date();
    return {
      'webhook-id': eventId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signer(opts.secret).sign(eventId, at, body),
    };
  };
  const send = async (body: string, headers: Record<string, string>) => {
    const res = await fetch(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, json: (await res.json().catch(() => null)) as unknown };
  };

  /** A registered charge of the test tenant, with what a sandbox notice names it by. */
  async function registeredCharge(value = 50) {
    const item = receivablePayload(clientId, receiver.url, { payment_method: 3, value });
    await tenant.api.postIdempotent('/api/v1/accounts-receivable', [item]);
    await waitFor(() => callbacksFor(item.account_receivable_id).length === 1, 15_000, 'registered');
    const [row] = await queryRows<{ id: string; provider_charge_id: string; provider_account_id: string }>(
      system.databaseUrl,
      'select id, provider_charge_id, provider_account_id from receivables.receivables where account_receivable_id = $1',
      [item.account_receivable_id],
    );
    return { item, row };
  }
  const paidNotice = (row: { provider_charge_id: string; provider_account_id: string }, cents = 5000) =>
    JSON.stringify({
      event: 'charge.paid',
      charge_id: row.provider_charge_id,
      account_reference: row.provider_account_id,
      our_number: '1',
      paid_at: '2026-11-23T15:00:00.000Z',
      amount_paid_cents: cents,
      fee_cents: 50,
      method: 'pix',
    });
  /** Waits until no callback has arrived for 500 ms (earlier tests' callbacks may still come), and counts them. */
  async function settledCallbackCount(): Promise<number> {
    let count = -1;
    await waitFor(
      async () => {
        const before = receiver.received.length;
        await new Promise((r) => setTimeout(r, 500));
        const settled = receiver.received.length === before && before === count;
        count = receiver.received.length;
        return settled;
      },
      20_000,
      'callbacks to settle',
    );
    return count;
  }
  const refundsCounted = async () =>
    findSeries(await scrape(`http://127.0.0.1:${system.receivables!.port}`), MetricNames.paymentsNeedingRefund).reduce(
      (sum, s) => sum + s.value,
      0,
    );

  it('refuses forged, stale, future and unsigned notices (401), changing nothing and calling nobody back', async () => {
    const { item, row } = await registeredCharge();
    const body = paidNotice(row);
    const eventId = randomUUID();
    const callbacksBefore = await settledCallbackCount();
    const sixMinutes = 6 * 60_000;
    const good = signed(body, eventId);
    const answers = [
      await send(body, signed(body, eventId, { secret: 'forged-secret' })),
      await send(body, signed(body, eventId, { at: new Date(Date.now() - sixMinutes) })),
      await send(body, signed(body, eventId, { at: new Date(Date.now() + sixMinutes) })),
      await send(body.replace('5000', '1'), good),
      await send(body, { 'webhook-id': eventId, 'webhook-timestamp': good['webhook-timestamp'] }),
      // The old scheme (HMAC of the body alone, X-Sandbox-* headers) is no longer accepted.
      await send(body, {
        'x-sandbox-event-id': eventId,
        'x-sandbox-signature': `sha256=${createHmac('sha256', SANDBOX_SECRET).update(body).digest('hex')}`,
      }),
    ];
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 401]);
    expect(answers[1].json).toEqual({ error: 'webhook-timestamp is more than 5 minutes old' });
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.received).toHaveLength(callbacksBefore);
    expect((await consult(tenant, item.account_receivable_id)).json).toMatchObject({ status_payment: 'Pendente' });
    const events = await queryRows(
      system.databaseUrl,
      'select 1 from receivables.provider_events where event_id = $1',
      [`bank-sandbox:${eventId}`],
    );
    expect(events).toEqual([]);
    // Unknown charge, correctly signed: 404 so the provider retries (our registration may not be committed).
    const unknown = paidNotice({ provider_charge_id: randomUUID(), provider_account_id: row.provider_account_id });
    expect((await send(unknown, signed(unknown, randomUUID()))).status).toBe(404);
  });

  it('applies a webhook-id once: a replay answers 200 and changes nothing, with no second callback', async () => {
    const { item, row } = await registeredCharge();
    const body = paidNotice(row);
    const eventId = randomUUID();
    const headers = signed(body, eventId);
    expect(await send(body, headers)).toEqual({ status: 200, json: { result: 'approved' } });
    await waitFor(() => callbacksFor(item.account_receivable_id).some(isPaid), 15_000, 'paid callback');
    const callbacksBefore = await settledCallbackCount();
    const paid = (await consult(tenant, item.account_receivable_id)).json;
    expect(paid).toMatchObject({
      status_payment: 'Aprovada',
      amount_paid: 50,
      payment_date: '2026-11-23T12:00:00.000',
    });

    const other = paidNotice(row, 1);
    const replays = [await send(body, headers), await send(other, signed(other, eventId))];
    expect(replays).toEqual([
      { status: 200, json: { result: 'duplicate' } },
      { status: 200, json: { result: 'duplicate' } },
    ]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.received).toHaveLength(callbacksBefore);
    expect(callbacksFor(item.account_receivable_id).filter(isPaid)).toHaveLength(1);
    expect((await consult(tenant, item.account_receivable_id)).json).toEqual(paid);
  });

  it('keeps a payment for a cancelled charge for a refund: still cancelled, no paid callback, counted and recorded', async () => {
    const { item, row } = await registeredCharge(75);
    const cancel = await tenant.api.postIdempotent(
      `/api/v1/accounts-receivable/${item.account_receivable_id}/cancel`,
      undefined,
    );
    expect(cancel.status).toBe(202);
    await waitFor(() => callbacksFor(item.account_receivable_id).some(isCancelled), 15_000, 'cancellation callback');
    const counted = await refundsCounted();
    const cancelled = (await consult(tenant, item.account_receivable_id)).json;
    expect(cancelled).toMatchObject({ status_payment: 'Cancelada' });
    const body = paidNotice(row, 7500);
    const eventId = randomUUID();
    expect(await send(body, signed(body, eventId))).toEqual({ status: 200, json: { result: 'needs_refund' } });
    // The provider retries (say, its answer was lost): the same id, answered 200, still one refund.
    expect(await send(body, signed(body, eventId))).toEqual({ status: 200, json: { result: 'duplicate' } });

    await new Promise((r) => setTimeout(r, 1500));
    expect(callbacksFor(item.account_receivable_id).filter(isPaid)).toEqual([]);
    expect((await consult(tenant, item.account_receivable_id)).json).toEqual(cancelled);
    expect(await refundsCounted()).toBe(counted + 1);
    const refunds = await queryRows(
      system.databaseUrl,
      `select event_id, charge_state, amount_paid_cents, fee_cents, payment_type, provider_charge_id
         from receivables.payments_needing_refund where receivable_id = $1`,
      [row.id],
    );
    expect(refunds).toEqual([
      {
        event_id: `bank-sandbox:${eventId}`,
        charge_state: 'cancelled',
        amount_paid_cents: 7500,
        fee_cents: 50,
        payment_type: 'pix',
        provider_charge_id: row.provider_charge_id,
      },
    ]);
  });
});
