import { createHmac, randomUUID } from 'node:crypto';
import type { Bus } from '@payments/bus';
import {
  ServiceError,
  SLIP_PDF_PATH,
  SLIP_QRCODE_PATH,
  Streams,
  Subjects,
  type CancellationJob,
  type ProviderAccountVersion,
  type RegisteredCallback,
  type RegistrationJob,
} from '@payments/contracts';
import { createMetricsRegistry, MetricNames } from '@payments/metrics';
import { checkLink } from '@payments/signed-links';
import { decodeQrPng } from '@payments/test-support/slip-checks';
import type { ReceivableRow } from '../src/db/schema';
import { processCancellation, requestCancellation } from '../src/domain/cancellation';
import { acceptReceivables } from '../src/domain/intake';
import { listInstallments } from '../src/domain/installments';
import { recordPayment } from '../src/domain/payments';
import type { ProviderPayment } from '../src/domain/ports';
import { registerReceivables } from '../src/domain/registration';
import { LEGACY_SANDBOX_ACCOUNT } from '../src/transport/providers/legacy-account';
import { slipLinkExpiry } from '../src/transport/providers/slip-links';
import { paymentMetrics } from '../src/transport/metrics';
import {
  accountVersion,
  callbacksFor,
  chargeItem,
  history,
  outbox,
  providersOf,
  row,
  rowById,
  serveOverBus,
  serveProviderWebhooks,
  startStateFixture,
  TEST_LINKS,
  TestProvider,
  TZ,
  workerDeps,
  type ServedBus,
  type StateFixture,
} from './state-fixture';

// Provider accounts in receivables-svc: intake stores the account version with its charges, every
// provider call names the account, and payments are matched within one account (and its tenant).
// Postgres is real (the fixture's throw-away database), so are the webhook HTTP server and NATS;
// the banks are our PaymentProvider port filled by test doubles.

const SECRET = 'sandbox-webhook-secret';

let f: StateFixture;
/** The banks behind the webhook server and the bus handlers: tests set what they answer. */
const sandbox = new TestProvider();
const inter = new TestProvider('inter_');
let webhooks: { port: number; stop(): Promise<void> };
const metrics = createMetricsRegistry('receivables-test');

beforeAll(async () => {
  f = await startStateFixture();
  webhooks = await serveProviderWebhooks(f, {
    metrics,
    paymentMetrics: paymentMetrics(metrics),
    providerWebhookSecret: SECRET,
  });
});
afterAll(async () => {
  await webhooks?.stop();
  await f?.stop();
});

const job = (rows: Array<Pick<ReceivableRow, 'id' | 'tenant_id'>>): RegistrationJob => ({
  tenant_id: rows[0].tenant_id,
  receivable_ids: rows.map((r) => r.id),
});

/** Accepts one charge under `account` (for its tenant) and returns its row. */
async function acceptUnder(account: ProviderAccountVersion, overrides = {}): Promise<ReceivableRow> {
  const clientId = f.clients.add(account.tenant_id);
  const item = chargeItem(clientId, overrides);
  await acceptReceivables(f.db, f.clients, account.tenant_id, account, [item]);
  return row(f, account.tenant_id, item.account_receivable_id);
}

/** Accepts and registers one charge under `account` with `provider`. */
async function registeredUnder(account: ProviderAccountVersion, provider = sandbox, overrides = {}) {
  const r = await acceptUnder(account, overrides);
  expect(await registerReceivables(workerDeps(f, provider), job([r]), 1)).toBe('done');
  return rowById(f, r.id);
}

/** Gives a row the charge id and our_number a bank handed out (two banks may hand out the same ones). */
async function setCharge(r: ReceivableRow, chargeId: string, ourNumber: string): Promise<ReceivableRow> {
  await f.db
    .updateTable('receivables')
    .set({ provider_charge_id: chargeId, our_number: ourNumber })
    .where('id', '=', r.id)
    .execute();
  return rowById(f, r.id);
}

/** A sandbox payment notice, signed as the sandbox signs it (Standard Webhooks), unless told otherwise. */
async function postSandboxWebhook(
  body: Record<string, unknown>,
  eventId = randomUUID(),
  opts: { ageSeconds?: number; key?: string; headers?: Record<string, string> } = {},
) {
  const raw = JSON.stringify({
    event: 'charge.paid',
    our_number: '00000000001',
    paid_at: '2026-11-23T15:00:00.000Z',
    amount_paid_cents: 15075,
    fee_cents: 199,
    method: 'boleto',
    ...body,
  });
  const timestamp = String(Math.floor(Date.now() / 1000) - (opts.ageSeconds ?? 0));
  const signature = createHmac('sha256', opts.key ?? SECRET)
    .update(`${eventId}.${timestamp}.${raw}`)
    .digest('base64');
  const response = await fetch(`http://127.0.0.1:${webhooks.port}/provider/webhooks/bank-sandbox`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': eventId,
      'webhook-timestamp': timestamp,
      'webhook-signature': `v1,${signature}`,
      ...opts.headers,
    },
    body: raw,
  });
  return { status: response.status, body: (await response.json().catch(() => null)) as { result?: string } | null };
}

/** receivables_payments_needing_refund_total as this server's registry counts it. */
async function paymentsNeedingRefund(): Promise<number> {
  const metric = metrics.getSingleMetric(MetricNames.paymentsNeedingRefund);
  return (await metric!.get()).values.reduce((sum, v) => sum + v.value, 0);
}

async function expectServiceError(promise: Promise<unknown>, code: string): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceError);
  expect((err as ServiceError).code).toBe(code);
}

describe('intake under a provider account', () => {
  it('stores the account version once, with the batch, and every receivable references it', async () => {
    const tenantId = randomUUID();
    const account = accountVersion(tenantId);
    const clientId = f.clients.add(tenantId);
    await acceptReceivables(f.db, f.clients, tenantId, account, [chargeItem(clientId), chargeItem(clientId)]);
    // A later batch under the same version (the ERP posted again): the stored version is kept as it was.
    const altered = { ...account, beneficiary: { ...account.beneficiary, name: 'Someone else' } };
    await acceptReceivables(f.db, f.clients, tenantId, altered, [chargeItem(clientId)]);
    const stored = await f.db.selectFrom('provider_accounts').selectAll().where('tenant_id', '=', tenantId).execute();
    expect(stored).toEqual([
      expect.objectContaining({
        id: account.account_id,
        provider: 'sandbox',
        beneficiary: account.beneficiary,
        base_url: null,
        sealed_credentials: null,
      }),
    ]);
    const rows = await f.db
      .selectFrom('receivables')
      .select('provider_account_id')
      .where('tenant_id', '=', tenantId)
      .execute();
    expect(rows.map((r) => r.provider_account_id)).toEqual([
      account.account_id,
      account.account_id,
      account.account_id,
    ]);
  });

  it("refuses a batch without an account or with another tenant's, storing nothing", async () => {
    const tenantId = randomUUID();
    const clientId = f.clients.add(tenantId);
    const foreign = accountVersion(randomUUID());
    await expectServiceError(
      acceptReceivables(f.db, f.clients, tenantId, foreign, [chargeItem(clientId)]),
      'no_provider_account',
    );
    await expectServiceError(
      acceptReceivables(f.db, f.clients, tenantId, undefined, [chargeItem(clientId)]),
      'no_provider_account',
    );
    const count = await f.db
      .selectFrom('receivables')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
    expect(
      await f.db.selectFrom('provider_accounts').select('id').where('id', '=', foreign.account_id).execute(),
    ).toEqual([]);
  });
});

describe('registration by account', () => {
  it("goes to the account's provider kind with the account; an inter charge's PDF and QR links are signed gateway links", async () => {
    const sandboxAccount = accountVersion(randomUUID());
    const interAccount = accountVersion(randomUUID(), 'inter');
    const bySandbox = new TestProvider();
    const byInter = new TestProvider('inter_');
    const deps = { ...workerDeps(f, bySandbox), providers: { sandbox: bySandbox, inter: byInter, pix: byInter } };
    const s = await acceptUnder(sandboxAccount);
    const i = await acceptUnder(interAccount, { due_date: '2027-12-15' });
    expect(await registerReceivables(deps, job([s]), 1)).toBe('done');
    expect(await registerReceivables(deps, job([i]), 1)).toBe('done');

    expect(bySandbox.registerAccounts.map((a) => [a.id, a.tenantId, a.provider])).toEqual([
      [sandboxAccount.account_id, sandboxAccount.tenant_id, 'sandbox'],
    ]);
    expect(bySandbox.registerAccounts[0].beneficiary).toEqual(sandboxAccount.beneficiary);
    expect(byInter.registerAccounts.map((a) => [a.id, a.provider, a.sealedCredentials])).toEqual([
      [interAccount.account_id, 'inter', interAccount.sealed_credentials],
    ]);

    // The sandbox's PDF is public: its own URL. Inter's needs its credentials: a signed gateway link.
    expect((await rowById(f, s.id)).pdf_url).toBe(bySandbox.charges.get(s.id)!.pdfUrl);
    const interRow = await rowById(f, i.id);
    const link = new URL(interRow.pdf_url!);
    expect(`${link.origin}${link.pathname}`).toBe(`${TEST_LINKS.publicBaseUrl}${SLIP_PDF_PATH}/${i.id}`);
    const expires = link.searchParams.get('expires')!;
    expect(checkLink(TEST_LINKS.downloadLinkSecret, i.id, expires, link.searchParams.get('signature')!)).toBe('valid');
    expect(checkLink(TEST_LINKS.downloadLinkSecret, s.id, expires, link.searchParams.get('signature')!)).toBe(
      'tampered',
    );
    const lastsUntil = Number(expires) * 1000;
    expect(lastsUntil).toBeGreaterThanOrEqual(Date.now() + 30 * 86_400_000 - 5_000);
    expect(lastsUntil).toBeGreaterThanOrEqual(Date.parse('2027-12-15T00:00:00Z') + 90 * 86_400_000);

    // Inter serves no QR image: a signed gateway link to the QR drawn from the charge's PIX code.
    expect((await rowById(f, s.id)).qrcode_image_url).toBe(bySandbox.charges.get(s.id)!.qrcodeImageUrl);
    const qr = new URL(interRow.qrcode_image_url!);
    expect(`${qr.origin}${qr.pathname}`).toBe(`${TEST_LINKS.publicBaseUrl}${SLIP_QRCODE_PATH}/${i.id}`);
    expect(qr.searchParams.get('expires')).toBe(expires);
    expect(checkLink(TEST_LINKS.downloadLinkSecret, i.id, expires, qr.searchParams.get('signature')!)).toBe('valid');
    expect(interRow.pix_copy_and_paste).toBe(byInter.charges.get(i.id)!.pixCopyAndPaste);

    const [callback] = await callbacksFor(f, interRow);
    const paymentData = (callback.payload as RegisteredCallback).payment_data;
    expect(paymentData.pdf).toBe(interRow.pdf_url);
    expect(paymentData.qrcode_image).toBe(interRow.qrcode_image_url);
  });

  it("gives an inter charge whose bank hands out no QR image URL (Inter's '') a QR code link", async () => {
    const account = accountVersion(randomUUID(), 'inter');
    const byInter = new TestProvider('inter_');
    byInter.noQrImage = true;
    const r = await acceptUnder(account, { due_date: '2026-12-20' });
    expect(await registerReceivables(workerDeps(f, byInter), job([r]), 1)).toBe('done');
    expect(byInter.charges.get(r.id)!.qrcodeImageUrl).toBe('');
    const registered = await rowById(f, r.id);
    expect(registered.qrcode_image_url).toMatch(
      new RegExp(`^${TEST_LINKS.publicBaseUrl}${SLIP_QRCODE_PATH}/${r.id}\\?expires=\\d+&signature=[0-9a-f]{64}$`),
    );
    const [callback] = await callbacksFor(f, registered);
    expect((callback.payload as RegisteredCallback).payment_data.qrcode_image).toBe(registered.qrcode_image_url);
  });

  it('makes slip links last until 90 days after the due date, and at least 30 days from now', () => {
    const now = new Date('2026-11-23T12:00:00Z');
    expect(slipLinkExpiry('2026-12-15', now).toISOString()).toBe('2027-03-15T00:00:00.000Z');
    expect(slipLinkExpiry('2026-01-10', now).toISOString()).toBe('2026-12-23T12:00:00.000Z');
  });

  it('registers a receivable from before accounts (none) with the sandbox and its default payee', async () => {
    const legacy = await acceptUnder(accountVersion(randomUUID()));
    await f.db.updateTable('receivables').set({ provider_account_id: null }).where('id', '=', legacy.id).execute();
    const bySandbox = new TestProvider();
    const byInter = new TestProvider('inter_');
    const deps = { ...workerDeps(f, bySandbox), providers: { sandbox: bySandbox, inter: byInter, pix: byInter } };
    expect(await registerReceivables(deps, job([legacy]), 1)).toBe('done');
    expect(bySandbox.registerAccounts).toEqual([LEGACY_SANDBOX_ACCOUNT]);
    expect(byInter.registerCalls).toEqual([]);
    expect((await rowById(f, legacy.id)).registration_status).toBe('registered');
  });

  it('keeps the id of a charge accepted but not issued yet, and consults it on the next attempt', async () => {
    const provider = new TestProvider('inter_');
    provider.plan = () => 'accepted_not_issued';
    const r = await acceptUnder(accountVersion(randomUUID(), 'inter'));
    expect(await registerReceivables(workerDeps(f, provider), job([r]), 1)).toEqual({ retryInMs: 1_000 });
    expect(await rowById(f, r.id)).toMatchObject({
      registration_status: 'queued',
      state: 'pending',
      provider_charge_id: `inter_${r.id}`,
    });
    expect(await callbacksFor(f, r)).toEqual([]);
    provider.plan = () => 'register';
    expect(await registerReceivables(workerDeps(f, provider), job([r]), 2)).toBe('done');
    expect(provider.registerCalls.map((call) => call[0].providerChargeId)).toEqual([null, `inter_${r.id}`]);
    expect(await rowById(f, r.id)).toMatchObject({ registration_status: 'registered', state: 'pending' });
  });

  it('cancels, quietly, a charge accepted but not issued when its receivable is cancelled meanwhile', async () => {
    const provider = new TestProvider('inter_');
    provider.plan = () => 'accepted_not_issued';
    const r = await acceptUnder(accountVersion(randomUUID(), 'inter'));
    await registerReceivables(workerDeps(f, provider), job([r]), 1);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    const requested: CancellationJob = { tenant_id: r.tenant_id, receivable_id: r.id, reason: 'requested' };
    expect(await processCancellation(workerDeps(f, provider), requested, 1)).toBe('done');
    expect(await registerReceivables(workerDeps(f, provider), job([r]), 2)).toBe('done');
    expect(await rowById(f, r.id)).toMatchObject({ state: 'cancelled', registration_status: 'skipped' });
    const cleanup = (await outbox<CancellationJob>(f, Streams.receivableCancellations)).find(
      (m) => m.payload.receivable_id === r.id && m.payload.reason === 'cleanup',
    );
    expect(cleanup).toBeDefined();
    expect(await processCancellation(workerDeps(f, provider), cleanup!.payload, 1)).toBe('done');
    expect(provider.cancelCalls).toEqual([`inter_${r.id}`]);
    expect(provider.cancelReasons).toEqual(['cleanup']);
  });

  it("cancels at the provider with the receivable's account and our reason", async () => {
    const provider = new TestProvider('inter_');
    const account = accountVersion(randomUUID(), 'inter');
    const r = await registeredUnder(account, provider);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    const cancel: CancellationJob = { tenant_id: r.tenant_id, receivable_id: r.id, reason: 'requested' };
    expect(await processCancellation(workerDeps(f, provider), cancel, 1)).toBe('done');
    expect(provider.cancelAccounts.map((a) => [a.id, a.provider])).toEqual([[account.account_id, 'inter']]);
    expect(provider.cancelCalls).toEqual([`inter_${r.id}`]);
    expect(provider.cancelReasons).toEqual(['requested by the ERP']);
    expect((await rowById(f, r.id)).state).toBe('cancelled');
  });
});

describe('sandbox webhook, matched within the account', () => {
  it('pays each of two tenants its own charge when their banks gave both the same charge id and our_number', async () => {
    const a = accountVersion(randomUUID());
    const b = accountVersion(randomUUID());
    const chargeId = `shared-${randomUUID()}`;
    const ra = await setCharge(await registeredUnder(a), chargeId, '00000000001');
    const rb = await setCharge(await registeredUnder(b), chargeId, '00000000001');

    const first = await postSandboxWebhook({ charge_id: chargeId, account_reference: a.account_id });
    expect(first).toEqual({ status: 200, body: { result: 'approved' } });
    expect((await rowById(f, ra.id)).state).toBe('approved');
    expect((await rowById(f, rb.id)).state).toBe('pending');

    const second = await postSandboxWebhook({
      charge_id: chargeId,
      account_reference: b.account_id.toUpperCase(),
      amount_paid_cents: 15000,
      method: 'pix',
    });
    expect(second).toEqual({ status: 200, body: { result: 'approved' } });
    expect(await rowById(f, rb.id)).toMatchObject({ state: 'approved', amount_paid_cents: 15000, payment_type: 'pix' });
    expect(await rowById(f, ra.id)).toMatchObject({ amount_paid_cents: 15075, payment_type: 'boleto' });
    for (const r of [ra, rb])
      expect((await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.paid')).toHaveLength(1);
  });

  it('does not match a charge of another account, nor of another tenant, nor a legacy one, and changes nothing', async () => {
    const a = accountVersion(randomUUID());
    const b = accountVersion(randomUUID());
    const rb = await registeredUnder(b);
    // Account a names b's charge: 404 (the sandbox would retry), nothing changes, the event is not consumed.
    const eventId = randomUUID();
    await acceptUnder(a); // stores account a
    const wrong = await postSandboxWebhook(
      { charge_id: rb.provider_charge_id, account_reference: a.account_id },
      eventId,
    );
    expect(wrong.status).toBe(404);
    expect((await rowById(f, rb.id)).state).toBe('pending');
    expect(
      await f.db
        .selectFrom('provider_events')
        .select('event_id')
        .where('event_id', '=', `bank-sandbox:${eventId}`)
        .execute(),
    ).toEqual([]);
    // An account that was never stored, and a legacy notice (no account) for an account's charge: 404 too.
    expect(
      (await postSandboxWebhook({ charge_id: rb.provider_charge_id, account_reference: randomUUID() })).status,
    ).toBe(404);
    expect((await postSandboxWebhook({ charge_id: rb.provider_charge_id })).status).toBe(404);
    // The tenant is part of every match: the right account with another tenant finds nothing.
    const payment: ProviderPayment = {
      eventId: randomUUID(),
      chargeId: rb.provider_charge_id!,
      paidAt: new Date(),
      amountPaidCents: 1,
      feeCents: 0,
      method: 'pix',
    };
    await expectServiceError(
      recordPayment(f.db, payment, { accountId: b.account_id, tenantId: a.tenant_id }, TZ, f.logger),
      'not_found',
    );
    expect((await rowById(f, rb.id)).state).toBe('pending');
    expect(await history(f, rb.id)).toEqual([]);
  });

  it("matches a notice named by a newer version of the same bank account (a renewed certificate), never another tenant's", async () => {
    const v1 = accountVersion(randomUUID());
    const r = await registeredUnder(v1);
    // The operator renewed the credentials: a new version with the same account key.
    const v2 = { ...accountVersion(v1.tenant_id), account_key: v1.account_key };
    await acceptUnder(v2);
    const payment = (eventId: string): ProviderPayment => ({
      eventId,
      chargeId: r.provider_charge_id!,
      paidAt: new Date(),
      amountPaidCents: r.amount_cents,
      feeCents: 0,
      method: 'pix',
    });
    // Another tenant's version carrying the same key finds nothing.
    const stranger = { ...accountVersion(randomUUID()), account_key: v1.account_key };
    await acceptUnder(stranger);
    await expectServiceError(
      recordPayment(
        f.db,
        payment(randomUUID()),
        { accountId: stranger.account_id, tenantId: stranger.tenant_id },
        TZ,
        f.logger,
      ),
      'not_found',
    );
    // Another bank account of the same tenant finds nothing either.
    const other = accountVersion(v1.tenant_id);
    await acceptUnder(other);
    await expectServiceError(
      recordPayment(f.db, payment(randomUUID()), { accountId: other.account_id, tenantId: v1.tenant_id }, TZ, f.logger),
      'not_found',
    );
    expect(
      await recordPayment(
        f.db,
        payment(randomUUID()),
        { accountId: v2.account_id, tenantId: v1.tenant_id },
        TZ,
        f.logger,
      ),
    ).toBe('approved');
    expect((await rowById(f, r.id)).state).toBe('approved');
  });

  it('matches a notice without an account only among receivables from before accounts', async () => {
    const r = await registeredUnder(accountVersion(randomUUID()));
    await f.db.updateTable('receivables').set({ provider_account_id: null }).where('id', '=', r.id).execute();
    // account_reference null: what the sandbox sends for a charge registered without an account
    expect(await postSandboxWebhook({ charge_id: r.provider_charge_id, account_reference: null })).toEqual({
      status: 200,
      body: { result: 'approved' },
    });
    expect((await rowById(f, r.id)).state).toBe('approved');
  });

  it('refuses an inter account named as a sandbox account', async () => {
    const interAccount = accountVersion(randomUUID(), 'inter');
    const r = await registeredUnder(interAccount, inter);
    expect(
      (await postSandboxWebhook({ charge_id: r.provider_charge_id, account_reference: interAccount.account_id }))
        .status,
    ).toBe(404);
    expect((await rowById(f, r.id)).state).toBe('pending');
  });
});

describe('sandbox webhook: signed, fresh, applied once', () => {
  /** What a notice could have changed: the charge, provider events, callbacks and refunds. */
  async function footprint(r: ReceivableRow, eventId: string) {
    const events = await f.db
      .selectFrom('provider_events')
      .select('event_id')
      .where('event_id', '=', `bank-sandbox:${eventId}`)
      .execute();
    const refunds = await f.db
      .selectFrom('payments_needing_refund')
      .select('event_id')
      .where('receivable_id', '=', r.id)
      .execute();
    const row = await rowById(f, r.id);
    return { row: { ...row, updated_at: null }, events, refunds, callbacks: await callbacksFor(f, r) };
  }

  it('answers 401 to a forged, stale, future or unsigned notice, and changes nothing', async () => {
    const account = accountVersion(randomUUID());
    const r = await registeredUnder(account);
    const eventId = randomUUID();
    const before = await footprint(r, eventId);
    const notice = { charge_id: r.provider_charge_id, account_reference: account.account_id };
    const refused = [
      await postSandboxWebhook(notice, eventId, { key: 'not-the-secret' }),
      await postSandboxWebhook(notice, eventId, { ageSeconds: 6 * 60 }),
      await postSandboxWebhook(notice, eventId, { ageSeconds: -6 * 60 }),
      await postSandboxWebhook(notice, eventId, { headers: { 'webhook-signature': '' } }),
      // The old scheme (body-only HMAC, X-Sandbox-*) is no longer accepted.
      await postSandboxWebhook(notice, eventId, {
        headers: { 'webhook-signature': '', 'x-sandbox-signature': 'sha256=' + '0'.repeat(64) },
      }),
    ];
    expect(refused.map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);
    expect(refused[1].body).toEqual({ error: 'webhook-timestamp is more than 5 minutes old' });
    expect(await footprint(r, eventId)).toEqual(before);
    expect(before.row.state).toBe('pending');
  });

  it('answers 200 to a webhook-id already applied, and changes nothing, even with another signed body', async () => {
    const account = accountVersion(randomUUID());
    const r = await registeredUnder(account);
    const eventId = randomUUID();
    const notice = { charge_id: r.provider_charge_id, account_reference: account.account_id };
    expect(await postSandboxWebhook(notice, eventId)).toEqual({ status: 200, body: { result: 'approved' } });
    const applied = await footprint(r, eventId);
    expect(applied.row).toMatchObject({ state: 'approved', amount_paid_cents: 15075 });
    expect(await postSandboxWebhook(notice, eventId, { ageSeconds: 60 })).toEqual({
      status: 200,
      body: { result: 'duplicate' },
    });
    expect(await postSandboxWebhook({ ...notice, amount_paid_cents: 1, method: 'pix' }, eventId)).toEqual({
      status: 200,
      body: { result: 'duplicate' },
    });
    expect(await footprint(r, eventId)).toEqual(applied);
  });

  it('keeps a payment for a charge the provider had cancelled: 200 needs_refund, still cancelled, counted once', async () => {
    const account = accountVersion(randomUUID());
    const r = await registeredUnder(account);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    const cancellation: CancellationJob = { tenant_id: r.tenant_id, receivable_id: r.id, reason: 'requested' };
    expect(await processCancellation(workerDeps(f, sandbox), cancellation, 1)).toBe('done');
    const counted = await paymentsNeedingRefund();
    const eventId = randomUUID();
    const notice = { charge_id: r.provider_charge_id, account_reference: account.account_id, method: 'pix' };
    expect(await postSandboxWebhook(notice, eventId)).toEqual({ status: 200, body: { result: 'needs_refund' } });
    expect(await postSandboxWebhook(notice, eventId)).toEqual({ status: 200, body: { result: 'duplicate' } });
    expect(await paymentsNeedingRefund()).toBe(counted + 1);
    const after = await footprint(r, eventId);
    expect(after.row).toMatchObject({ state: 'cancelled', payment_date: null, amount_paid_cents: null });
    expect(after.refunds).toEqual([{ event_id: `bank-sandbox:${eventId}` }]);
    expect(after.callbacks.map((c) => c.event_type)).toEqual(['receivable.registered', 'receivable.cancelled']);
  });
});

describe('installments of a booklet', () => {
  it('lists the pending and paid ones by due date then id, with state and payment date, and the account beneficiary as payee', async () => {
    const provider = new TestProvider();
    const account = accountVersion(randomUUID(), 'sandbox', { name: 'Escola Aurora' });
    const slip = randomUUID();
    const at = (due: string, id: string) => ({
      payment_slip_id: slip,
      due_date: due,
      account_receivable_id: id,
    });
    const ids = ['10000000-0000-4000-8000-000000000000', '20000000-0000-4000-8000-000000000000'];
    const paid = await registeredUnder(account, provider, at('2026-12-10', randomUUID()));
    const laterB = await registeredUnder(account, provider, at('2027-01-10', ids[1]));
    const laterA = await acceptUnder(account, at('2027-01-10', ids[0])); // not registered yet
    const cancelled = await registeredUnder(account, provider, at('2026-11-30', randomUUID()));
    const rejecting = new TestProvider();
    rejecting.plan = () => 'reject';
    const rejected = await registeredUnder(account, rejecting, at('2026-11-29', randomUUID()));
    expect(rejected.state).toBe('rejected');
    await requestCancellation(f.db, account.tenant_id, cancelled.account_receivable_id);
    await processCancellation(
      workerDeps(f, provider),
      { tenant_id: account.tenant_id, receivable_id: cancelled.id, reason: 'requested' },
      1,
    );
    const paidAt = new Date('2026-12-09T18:30:00.000Z');
    await recordPayment(
      f.db,
      {
        eventId: randomUUID(),
        chargeId: paid.provider_charge_id!,
        paidAt,
        amountPaidCents: 15075,
        feeCents: 0,
        method: 'pix',
      },
      { accountId: account.account_id, tenantId: account.tenant_id },
      TZ,
      f.logger,
    );

    const reply = await listInstallments(f.db, account.tenant_id, slip);
    expect(reply.payee).toEqual(account.beneficiary);
    expect(reply.installments.map((i) => [i.account_receivable_id, i.state, i.payment_date, i.registered])).toEqual([
      [paid.account_receivable_id, 'approved', paidAt.toISOString(), true],
      [laterA.account_receivable_id, 'pending', null, false],
      [laterB.account_receivable_id, 'pending', null, true],
    ]);
    // Another tenant asking for the same payment_slip_id sees nothing.
    expect(await listInstallments(f.db, randomUUID(), slip)).toEqual({ installments: [], payee: null });
  });

  it('has no payee for installments accepted before accounts existed', async () => {
    const r = await acceptUnder(accountVersion(randomUUID()));
    await f.db.updateTable('receivables').set({ provider_account_id: null }).where('id', '=', r.id).execute();
    const reply = await listInstallments(f.db, r.tenant_id, r.payment_slip_id);
    expect(reply.payee).toBeNull();
    expect(reply.installments.map((i) => i.account_receivable_id)).toEqual([r.account_receivable_id]);
  });
});

describe('slip PDF and QR code on the bus', () => {
  let served: ServedBus;
  let bus: Bus;
  const bank = new TestProvider('inter_');

  beforeAll(async () => {
    served = await serveOverBus(f, providersOf(bank));
    ({ bus } = served);
  });
  afterAll(async () => {
    await served?.stop();
  });

  const ask = (receivableId: string) =>
    bus.request(Subjects.receivables.slipPdf, { receivable_id: receivableId }, { service: 'receivables' });

  it("fetches the PDF from the receivable's bank, base64", async () => {
    const r = await registeredUnder(accountVersion(randomUUID(), 'inter'), bank);
    const reply = await ask(r.id.toUpperCase());
    expect(Buffer.from(reply.pdf_base64, 'base64').toString()).toBe(`%PDF-1.4 slip of ${r.provider_charge_id}`);
  });

  it('answers not_found for an unknown receivable or one not registered yet, service_unavailable when the bank is down', async () => {
    await expectServiceError(ask(randomUUID()), 'not_found');
    await expectServiceError(ask('not-a-uuid'), 'not_found');
    const queued = await acceptUnder(accountVersion(randomUUID(), 'inter'));
    await expectServiceError(ask(queued.id), 'not_found');
    const r = await registeredUnder(accountVersion(randomUUID(), 'inter'), bank);
    bank.down = true;
    try {
      await expectServiceError(ask(r.id), 'service_unavailable');
    } finally {
      bank.down = false;
    }
  });

  const askQr = (receivableId: string) =>
    bus.request(Subjects.receivables.slipQrCode, { receivable_id: receivableId }, { service: 'receivables' });

  it("draws the QR code of the charge's PIX copy-and-paste as a PNG, without asking the bank", async () => {
    const r = await registeredUnder(accountVersion(randomUUID(), 'inter'), bank);
    expect(r.pix_copy_and_paste).toBeTruthy();
    bank.down = true;
    try {
      const reply = await askQr(r.id.toUpperCase());
      const png = Buffer.from(reply.png_base64, 'base64');
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(decodeQrPng(png)).toBe(r.pix_copy_and_paste);
    } finally {
      bank.down = false;
    }
    const other = await registeredUnder(accountVersion(randomUUID(), 'inter'), bank);
    expect(other.pix_copy_and_paste).not.toBe(r.pix_copy_and_paste);
    expect(decodeQrPng(Buffer.from((await askQr(other.id)).png_base64, 'base64'))).toBe(other.pix_copy_and_paste);
  });

  it('answers not_found for a QR code of an unknown receivable, one not registered yet, or one without a PIX code', async () => {
    await expectServiceError(askQr(randomUUID()), 'not_found');
    await expectServiceError(askQr('not-a-uuid'), 'not_found');
    const queued = await acceptUnder(accountVersion(randomUUID(), 'inter'));
    await expectServiceError(askQr(queued.id), 'not_found');
    const r = await registeredUnder(accountVersion(randomUUID(), 'inter'), bank);
    await f.db.updateTable('receivables').set({ pix_copy_and_paste: null }).where('id', '=', r.id).execute();
    await expectServiceError(askQr(r.id), 'not_found');
  });
});
