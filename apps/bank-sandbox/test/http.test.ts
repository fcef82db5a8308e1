import { createHmac, randomUUID } from 'node:crypto';
import { createDatabase, migrateService } from '@payments/db';
import type { Kysely } from 'kysely';
import {
  barcodeProblems,
  brCodeProblems,
  decodeQrPng,
  parseBrCode,
  typeableLineProblems,
} from '@payments/test-support/slip-checks';
import { Webhook } from 'standardwebhooks';
import { type ChargeResponse } from '../src';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { BankSandboxDatabase } from '../src/db/schema';
import { parseFreeField } from '../src/domain/free-field';
import { eventually, startHarness, type Harness } from './harness';

let h: Harness;
let db: Kysely<BankSandboxDatabase>;

beforeAll(async () => {
  h = await startHarness();
  db = createDatabase<BankSandboxDatabase>({ url: h.databaseUrl, schema: SCHEMA });
});
afterAll(async () => {
  await db?.destroy();
  await h?.close();
});
afterEach(async () => {
  await setMode('normal');
  h.receiver.scripts.clear();
  h.receiver.fallback = 200;
});

const API_KEY = 'sandbox-api-key';

function chargeBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'hybrid_slip',
    amount_cents: 12_345,
    issue_date: '2025-06-01',
    due_date: '2025-07-10',
    payer: {
      name: 'Maria da Silva',
      tax_id: '529.982.247-25',
      address: 'Av. Paulista, 1000',
      city: 'São Paulo',
      state: 'SP',
      zip_code: '01310-100',
    },
    discount: { amount_cents: 500, until: '2025-07-05' },
    fine_percent_bp: 200,
    interest_per_day_cents: 4,
    instructions: ['Não receber após 30 dias'],
    description_lines: [{ description: 'Mensalidade julho', quantity: 1, price_cents: 12_345 }],
    reference: 'ar-1',
    ...overrides,
  };
}

async function call(
  method: string,
  path: string,
  opts: { body?: unknown; key?: string | null; idempotencyKey?: string } = {},
) {
  const headers: Record<string, string> = {};
  if (opts.key !== null) headers.authorization = `Bearer ${opts.key ?? API_KEY}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
  const response = await fetch(`${h.sandbox.url}${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const type = response.headers.get('content-type') ?? '';
  const body: unknown = type.includes('json') ? await response.json() : Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, body };
}

async function createCharge(overrides: Record<string, unknown> = {}, idempotencyKey = randomUUID()) {
  return call('POST', '/v1/charges', { body: chargeBody(overrides), idempotencyKey });
}

async function created(overrides: Record<string, unknown> = {}): Promise<ChargeResponse> {
  const res = await createCharge(overrides);
  expect(res.status).toBe(201);
  return res.body as ChargeResponse;
}

async function setMode(mode: string) {
  const res = await call('POST', '/sandbox/behaviour', { body: { mode }, key: null });
  expect(res.status).toBe(200);
}

async function chargeCount(): Promise<number> {
  const row = await db
    .selectFrom('charges')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const errorCode = (body: unknown) => (body as { error: { code: string } }).error.code;

describe('registration', () => {
  it('registers a hybrid slip with data a bank app accepts: barcode, typeable line, BR Code, QR image', async () => {
    const res = await createCharge();
    expect(res.status).toBe(201);
    const charge = res.body as ChargeResponse;
    expect(charge).toMatchObject({
      status: 'registered',
      kind: 'hybrid_slip',
      amount_cents: 12_345,
      due_date: '2025-07-10',
      reference: 'ar-1',
      paid_at: null,
    });
    expect(charge.charge_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(charge.our_number).toMatch(/^\d{11}$/);

    const barcode = charge.barcode!;
    expect(barcodeProblems(barcode, { amountCents: 12_345, dueDate: '2025-07-10' })).toEqual([]);
    expect(barcode.slice(0, 3)).toBe('999');
    expect(typeableLineProblems(charge.typeable_line!, barcode)).toEqual([]);
    expect(parseFreeField(barcode.slice(19))).toEqual({
      agency: '0001',
      wallet: '09',
      ourNumber: charge.our_number,
      account: '0123456',
    });

    expect(brCodeProblems(charge.pix_copy_and_paste)).toEqual([]);
    expect(parseBrCode(charge.pix_copy_and_paste)).toMatchObject({ amount: '123.45', txid: `SBX${charge.our_number}` });

    expect(charge.qrcode_image_url).toBe(
      `http://localhost:${h.sandbox.port}/v1/charges/${charge.charge_id}/qrcode.png`,
    );
    expect(charge.pdf_url).toBe(`http://localhost:${h.sandbox.port}/v1/charges/${charge.charge_id}/pdf`);
    const image = await fetch(charge.qrcode_image_url); // no Authorization: the link is handed to ERPs
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(decodeQrPng(Buffer.from(await image.arrayBuffer()))).toBe(charge.pix_copy_and_paste);

    const read = await call('GET', `/v1/charges/${charge.charge_id}`);
    expect(read).toMatchObject({ status: 200, body: charge });
  });

  it('registers a PIX charge: a BR Code and QR image, no barcode, and our_numbers keep counting', async () => {
    const first = await created();
    const pix = await created({ kind: 'pix', amount_cents: 5_000, discount: null });
    expect(pix).toMatchObject({ kind: 'pix', barcode: null, typeable_line: null });
    expect(Number(pix.our_number)).toBeGreaterThan(Number(first.our_number));
    expect(brCodeProblems(pix.pix_copy_and_paste)).toEqual([]);
    expect(parseBrCode(pix.pix_copy_and_paste).amount).toBe('50.00');
    const image = await call('GET', `/v1/charges/${pix.charge_id}/qrcode.png`, { key: null });
    expect(decodeQrPng(image.body as Buffer)).toBe(pix.pix_copy_and_paste);
  });

  it('serves the slip PDF without authentication, for slips and PIX charges', async () => {
    for (const charge of [await created(), await created({ kind: 'pix' })]) {
      const pdf = await fetch(charge.pdf_url);
      expect(pdf.status).toBe(200);
      expect(pdf.headers.get('content-type')).toBe('application/pdf');
      const bytes = Buffer.from(await pdf.arrayBuffer());
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(bytes.length).toBeGreaterThan(2_000);
    }
    expect((await call('GET', `/v1/charges/${randomUUID()}/pdf`, { key: null })).status).toBe(404);
  });

  it('is idempotent: the same key answers the same charge and stores nothing more; another body with it is 422', async () => {
    const key = randomUUID();
    const first = await createCharge({}, key);
    const before = await chargeCount();
    // Same body, keys in another order: still the same request.
    const { payer, ...rest } = chargeBody();
    const again = await call('POST', '/v1/charges', { body: { payer, ...rest }, idempotencyKey: key });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((again.body as ChargeResponse).charge_id).toBe((first.body as ChargeResponse).charge_id);
    expect((again.body as ChargeResponse).our_number).toBe((first.body as ChargeResponse).our_number);
    expect(await chargeCount()).toBe(before);

    const other = await createCharge({ amount_cents: 999 }, key);
    expect(other.status).toBe(422);
    expect(errorCode(other.body)).toBe('idempotency_key_reused');
    expect(await chargeCount()).toBe(before);
  });

  it('registers once when retries with one key race each other', async () => {
    const key = randomUUID();
    const before = await chargeCount();
    const answers = await Promise.all(Array.from({ length: 6 }, () => createCharge({}, key)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => (a.body as ChargeResponse).our_number)).size).toBe(1);
    expect(await chargeCount()).toBe(before + 1);
  });

  it('answers 401 without the API key or with another one', async () => {
    for (const key of [null, 'wrong-key']) {
      const res = await call('POST', '/v1/charges', { body: chargeBody(), idempotencyKey: randomUUID(), key });
      expect(res.status).toBe(401);
      expect(errorCode(res.body)).toBe('unauthorized');
      expect((await call('GET', `/v1/charges/${randomUUID()}`, { key })).status).toBe(401);
    }
  });

  it('answers 422 invalid_request to a bad body or a missing Idempotency-Key, and stores nothing', async () => {
    const before = await chargeCount();
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ amount_cents: 0 }, /amount_cents/],
      [{ amount_cents: 10.5 }, /amount_cents/],
      [{ kind: 'cheque' }, /kind/],
      [{ due_date: '2025-02-30' }, /due_date/],
      [{ due_date: '2025-05-01' }, /due_date must not be before issue_date/],
      [{ payer: { name: 'Ana', tax_id: '123.456.789-00' } }, /tax_id/],
      [{ payer: { tax_id: '529.982.247-25' } }, /payer\/name is required/],
      [
        { discount: { amount_cents: 20_000, until: '2025-07-01' } },
        /discount\/amount_cents must be less than amount_cents/,
      ],
      [{ discount: { amount_cents: 100, until: '2025-08-01' } }, /discount\/until/],
      [{ fine_percent_bp: -1 }, /fine_percent_bp/],
    ];
    for (const [overrides, message] of bad) {
      const res = await createCharge(overrides);
      expect(res.status).toBe(422);
      expect(errorCode(res.body)).toBe('invalid_request');
      expect((res.body as { error: { message: string } }).error.message).toMatch(message);
    }
    const noKey = await call('POST', '/v1/charges', { body: chargeBody() });
    expect(noKey.status).toBe(422);
    expect((noKey.body as { error: { message: string } }).error.message).toMatch(/Idempotency-Key/);
    const malformed = await fetch(`${h.sandbox.url}/v1/charges`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${API_KEY}`,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
      },
      body: '{"kind":',
    });
    expect(malformed.status).toBe(400);
    expect(await chargeCount()).toBe(before);
  });
});

describe('sandbox behaviour', () => {
  it('reject: 422 charge_rejected and nothing stored, until normal again', async () => {
    await setMode('reject');
    expect(await call('GET', '/sandbox/behaviour', { key: null })).toMatchObject({
      status: 200,
      body: { mode: 'reject' },
    });
    const before = await chargeCount();
    const res = await createCharge();
    expect(res.status).toBe(422);
    expect(errorCode(res.body)).toBe('charge_rejected');
    expect(await chargeCount()).toBe(before);
    await setMode('normal');
    expect((await createCharge()).status).toBe(201);
  });

  it('down: 503 to the charge API (documents too), while /sandbox/* and /healthz answer', async () => {
    const charge = await created();
    await setMode('down');
    const res = await createCharge();
    expect(res.status).toBe(503);
    expect(errorCode(res.body)).toBe('unavailable');
    expect((await call('GET', `/v1/charges/${charge.charge_id}`)).status).toBe(503);
    expect((await call('GET', `/v1/charges/${charge.charge_id}/pdf`, { key: null })).status).toBe(503);
    expect((await call('GET', '/healthz', { key: null })).status).toBe(200);
    expect((await call('GET', `/sandbox/charges/${charge.our_number}`, { key: null })).status).toBe(200);
  });

  // The harness's slow delay (1.5 s) separates "waited" from "did not wait" by more than a loaded
  // 2-core machine adds to a request, so the upper bounds below are that delay, not a few hundred ms.
  it('slow: registrations wait BANK_SANDBOX_SLOW_MS before answering', async () => {
    const slowMs = h.config.slowMs;
    const fast = Date.now();
    expect((await createCharge()).status).toBe(201);
    expect(Date.now() - fast).toBeLessThan(slowMs);
    await setMode('slow');
    const started = Date.now();
    expect((await createCharge()).status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(slowMs);
  });

  it('per charge, by a marker in the payer name: one batch mixes outcomes', async () => {
    const before = await chargeCount();
    const payer = (name: string) => ({ payer: { name, tax_id: '529.982.247-25' } });
    const started = Date.now();
    const [ok, rejected, failed, slow] = await Promise.all([
      createCharge(payer('Ana')).then((r) => ({ ...r, ms: Date.now() - started })),
      createCharge(payer('Bia [sandbox:reject]')).then((r) => ({ ...r, ms: Date.now() - started })),
      createCharge(payer('Caio [sandbox:fail]')).then((r) => ({ ...r, ms: Date.now() - started })),
      createCharge(payer('Davi [sandbox:slow]')).then((r) => ({ ...r, ms: Date.now() - started })),
    ]);
    expect([ok.status, rejected.status, failed.status, slow.status]).toEqual([201, 422, 503, 201]);
    expect(errorCode(rejected.body)).toBe('charge_rejected');
    expect(ok.ms).toBeLessThan(h.config.slowMs);
    expect(slow.ms).toBeGreaterThanOrEqual(h.config.slowMs);
    expect(await chargeCount()).toBe(before + 2);
  });

  it('refuses an unknown mode', async () => {
    const res = await call('POST', '/sandbox/behaviour', { body: { mode: 'sleepy' }, key: null });
    expect(res.status).toBe(422);
  });
});

describe('payment and webhook', () => {
  function verify(delivery: { headers: Record<string, string | string[] | undefined>; body: string }) {
    // Standard Webhooks, recomputed with node:crypto alone and checked by the reference verifier, as a receiver would.
    const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = delivery.headers;
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(30);
    const expected = createHmac('sha256', 'sandbox-webhook-secret')
      .update(`${String(id)}.${String(timestamp)}.${delivery.body}`)
      .digest('base64');
    expect(signature).toBe(`v1,${expected}`);
    const headers = {
      'webhook-id': String(id),
      'webhook-timestamp': String(timestamp),
      'webhook-signature': String(signature),
    };
    const receiver = new Webhook(Buffer.from('sandbox-webhook-secret'), { format: 'raw' });
    expect(receiver.verify(delivery.body, headers)).toMatchObject({ event: 'charge.paid' });
    expect(delivery.headers['x-sandbox-signature']).toBeUndefined();
  }

  it('pays a slip: settled charge at once, then a signed charge.paid webhook', async () => {
    const charge = await created();
    const res = await call('POST', `/sandbox/charges/${charge.our_number}/pay`, {
      body: { method: 'boleto' },
      key: null,
    });
    expect(res.status).toBe(200);
    const paid = res.body as ChargeResponse;
    expect(paid).toMatchObject({
      charge_id: charge.charge_id,
      status: 'paid',
      amount_paid_cents: 12_345,
      fee_cents: 199,
      method: 'boleto',
    });
    expect(new Date(paid.paid_at!).toISOString()).toBe(paid.paid_at);

    const [delivery] = await eventually(() => {
      const found = h.receiver.deliveriesFor(charge.our_number);
      expect(found).toHaveLength(1);
      return found;
    });
    verify(delivery);
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(delivery.body)).toEqual({
      event: 'charge.paid',
      charge_id: charge.charge_id,
      our_number: charge.our_number,
      account_reference: null,
      paid_at: paid.paid_at,
      amount_paid_cents: 12_345,
      fee_cents: 199,
      method: 'boleto',
    });
    await eventually(async () => {
      const view = await call('GET', `/sandbox/charges/${charge.our_number}`, { key: null });
      expect(view.body).toMatchObject({ status: 'paid', notifications: [{ status: 'delivered', attempt_count: 1 }] });
    });
  });

  it('charges the PIX tariff on the amount paid, and nothing for a manual settlement', async () => {
    const pix = await created({ kind: 'pix', amount_cents: 5_000, discount: null });
    const byPix = await call('POST', `/sandbox/charges/${pix.our_number}/pay`, {
      body: { method: 'pix', amount: 100.5 },
      key: null,
    });
    expect(byPix.body).toMatchObject({ status: 'paid', amount_paid_cents: 10_050, fee_cents: 99, method: 'pix' }); // 99.495 -> 99
    const slip = await created();
    const manual = await call('POST', `/sandbox/charges/${Number(slip.our_number)}/pay`, {
      body: { method: 'manual' },
      key: null,
    });
    expect(manual.body).toMatchObject({ status: 'paid', amount_paid_cents: 12_345, fee_cents: 0, method: 'manual' });
  });

  it('retries the webhook while the receiver fails, with the same event id and body, each attempt signed', async () => {
    const charge = await created();
    h.receiver.scripts.set(charge.our_number, [500, 503]);
    expect(
      (await call('POST', `/sandbox/charges/${charge.our_number}/pay`, { body: { method: 'pix' }, key: null })).status,
    ).toBe(200);
    const deliveries = await eventually(() => {
      const found = h.receiver.deliveriesFor(charge.our_number);
      expect(found.map((d) => d.answeredWith)).toEqual([500, 503, 200]);
      return found;
    });
    expect(new Set(deliveries.map((d) => d.headers['webhook-id'])).size).toBe(1);
    expect(new Set(deliveries.map((d) => d.body)).size).toBe(1);
    deliveries.forEach(verify);
    const view = await call('GET', `/sandbox/charges/${charge.our_number}`, { key: null });
    expect(view.body).toMatchObject({
      notifications: [{ status: 'delivered', attempt_count: 3, last_status_code: 200 }],
    });
  });

  it('refuses to pay twice (409), a cancelled charge (409), an unknown our_number (404), a PIX charge by slip (422)', async () => {
    const charge = await created();
    const pay = (ourNumber: string, method = 'boleto') =>
      call('POST', `/sandbox/charges/${ourNumber}/pay`, { body: { method }, key: null });
    expect((await pay(charge.our_number)).status).toBe(200);
    const twice = await pay(charge.our_number);
    expect(twice.status).toBe(409);
    expect(errorCode(twice.body)).toBe('charge_not_open');

    const cancelled = await created();
    expect((await call('POST', `/v1/charges/${cancelled.charge_id}/cancel`)).status).toBe(200);
    expect((await pay(cancelled.our_number)).status).toBe(409);

    expect((await pay('99999999999')).status).toBe(404);
    expect((await pay('not-a-number')).status).toBe(404);

    const pix = await created({ kind: 'pix' });
    const bySlip = await pay(pix.our_number, 'boleto');
    expect(bySlip.status).toBe(422);
    expect(errorCode(bySlip.body)).toBe('payment_method_not_accepted');
    expect(
      (await call('POST', `/sandbox/charges/${pix.our_number}/pay`, { body: { method: 'cash' }, key: null })).status,
    ).toBe(422);
    expect(
      (
        await call('POST', `/sandbox/charges/${pix.our_number}/pay`, {
          body: { method: 'pix', amount: 1.234 },
          key: null,
        })
      ).status,
    ).toBe(422);
    // None of the refused payments notified anything.
    await new Promise((r) => setTimeout(r, 200));
    expect(h.receiver.deliveriesFor(cancelled.our_number)).toHaveLength(0);
    expect(h.receiver.deliveriesFor(pix.our_number)).toHaveLength(0);
  });

  it('resumes a pending webhook after a restart', async () => {
    h.receiver.fallback = 500;
    const charge = await created();
    expect(
      (await call('POST', `/sandbox/charges/${charge.our_number}/pay`, { body: { method: 'boleto' }, key: null }))
        .status,
    ).toBe(200);
    await eventually(() => expect(h.receiver.deliveriesFor(charge.our_number).length).toBeGreaterThanOrEqual(1));
    await h.restart();
    h.receiver.fallback = 200;
    await eventually(() => expect(h.receiver.deliveriesFor(charge.our_number).at(-1)?.answeredWith).toBe(200));
    const ids = new Set(h.receiver.deliveriesFor(charge.our_number).map((d) => d.headers['webhook-id']));
    expect(ids.size).toBe(1);
  });
});

describe('cancellation and reads', () => {
  it('cancels an open charge, answers 200 again for a cancelled one, 409 for a paid one, 404 for unknown ids', async () => {
    const charge = await created();
    const cancel = (id: string) => call('POST', `/v1/charges/${id}/cancel`);
    const first = await cancel(charge.charge_id);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ charge_id: charge.charge_id, status: 'cancelled' });
    expect((first.body as ChargeResponse).cancelled_at).not.toBeNull();
    expect(await cancel(charge.charge_id)).toMatchObject({ status: 200, body: { status: 'cancelled' } });

    const paid = await created();
    await call('POST', `/sandbox/charges/${paid.our_number}/pay`, { body: { method: 'manual' }, key: null });
    const refused = await cancel(paid.charge_id);
    expect(refused.status).toBe(409);
    expect(errorCode(refused.body)).toBe('charge_not_open');

    expect((await cancel(randomUUID())).status).toBe(404);
    expect((await cancel('nope')).status).toBe(404);
    expect((await call('GET', '/v1/charges/nope')).status).toBe(404);
    expect((await call('GET', `/v1/charges/${randomUUID()}`)).status).toBe(404);
  });

  it('answers /healthz and JSON 404 for unknown routes', async () => {
    expect(await call('GET', '/healthz', { key: null })).toMatchObject({ status: 200, body: { status: 'ok' } });
    const unknown = await call('GET', '/v2/whatever', { key: null });
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown.body)).toBe('not_found');
  });

  it('keeps its migrations idempotent', async () => {
    await expect(migrateService({ url: h.adminUrl, schema: SCHEMA, migrations })).resolves.toMatchObject({
      applied: [],
      aheadBy: [],
    });
  });
});

describe('batch registration', () => {
  type BatchResult = { status: number; charge?: ChargeResponse; error?: { code: string } };
  const batch = (charges: unknown[]) => call('POST', '/v1/charges/batch', { body: { charges } });

  it('registers many charges at once, one result per charge in order, idempotent per key', async () => {
    const before = await chargeCount();
    const keys = [randomUUID(), randomUUID(), randomUUID()];
    const charges = [
      { idempotency_key: keys[0], ...chargeBody({ kind: 'pix' }) },
      {
        idempotency_key: keys[1],
        ...chargeBody({ payer: { name: 'Rejeite [sandbox:reject]', tax_id: '529.982.247-25' } }),
      },
      { idempotency_key: keys[2], ...chargeBody({ amount_cents: -1 }) },
      { idempotency_key: keys[0], ...chargeBody({ kind: 'pix' }) },
      { ...chargeBody() },
    ];
    const first = await batch(charges);
    expect(first.status).toBe(200);
    const results = (first.body as { results: BatchResult[] }).results;
    expect(results.map((r) => r.status)).toEqual([201, 422, 422, 200, 422]);
    expect(results[1].error?.code).toBe('charge_rejected');
    expect(results[2].error?.code).toBe('invalid_request');
    expect(results[3].charge?.charge_id).toBe(results[0].charge?.charge_id);
    expect(await chargeCount()).toBe(before + 1);

    const again = await batch([charges[0], { idempotency_key: keys[0], ...chargeBody({ kind: 'hybrid_slip' }) }]);
    const replay = (again.body as { results: BatchResult[] }).results;
    expect(replay[0]).toMatchObject({ status: 200, charge: { our_number: results[0].charge?.our_number } });
    expect(replay[1].error?.code).toBe('idempotency_key_reused');
    expect(await chargeCount()).toBe(before + 1);
  });

  it('answers 503 to the whole batch when the bank is down, and 422 to an empty or oversized batch', async () => {
    await setMode('down');
    try {
      expect((await batch([{ idempotency_key: randomUUID(), ...chargeBody() }])).status).toBe(503);
    } finally {
      await setMode('normal');
    }
    expect((await batch([])).status).toBe(422);
    expect((await call('POST', '/v1/charges/batch', { body: { charges: [] }, key: 'wrong' })).status).toBe(401);
  });
});
