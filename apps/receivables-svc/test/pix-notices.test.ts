import { randomBytes, randomUUID } from 'node:crypto';
import { createMetricsRegistry } from '@payments/metrics';
import { txidFor } from '@payments/pix-api';
import type { ProviderKind } from '@payments/contracts';
import type { ReceivableRow } from '../src/db/schema';
import { receivableHistory } from '../src/domain/history';
import { applyDueNotices } from '../src/domain/notices';
import { storeNotices } from '../src/db/notice-store';
import type { ProviderChargeState } from '../src/domain/ports';
import { parsePixWebhook } from '../src/transport/providers/pix/webhook';
import { paymentMetrics } from '../src/transport/metrics';
import {
  acceptAndRegister,
  callbacksFor,
  chargeItem,
  history,
  noticesDueNow,
  PixBank,
  providersOf,
  rowById,
  serveProviderWebhooks,
  TZ,
  useStateFixture,
  type StateFixture,
} from './state-fixture';

// PIX notices posted by the bank to our webhook (the standard's `{ pix: [...] }` at <url>/pix), stored
// and answered, then applied by the notice worker once the cobv's consult confirms them; devoluções in
// the charge's history once each. Real Postgres and our real HTTP server; the bank behind `consult` is
// a test double of the PaymentProvider port whose answers each test sets.

let f: StateFixture;
useStateFixture((fixture) => {
  f = fixture;
});

let webhooks: { port: number; stop(): Promise<void> };
const metrics = createMetricsRegistry('receivables-test');
const payments = paymentMetrics(metrics);

beforeAll(async () => {
  webhooks = await serveProviderWebhooks(f, { metrics, paymentMetrics: payments });
});
afterAll(async () => {
  await webhooks?.stop();
});

/** A charge accepted under a `provider` account of a new tenant (PIX: payment_method 3) and registered. */
async function registered(
  bank: PixBank,
  provider: ProviderKind = 'pix',
  paymentMethod: 1 | 3 = 3,
): Promise<ReceivableRow> {
  const tenantId = randomUUID();
  const item = chargeItem(f.clients.add(tenantId), { payment_method: paymentMethod });
  return acceptAndRegister(f, providersOf(bank), tenantId, f.accountFor(tenantId, provider), item);
}

/** Applies what is due now; `later` first makes every kept notice due (as time passing would). */
async function apply(bank: PixBank, later = false): Promise<void> {
  if (later) await noticesDueNow(f);
  await applyDueNotices({
    db: f.db,
    providers: providersOf(bank),
    accounts: f.accounts,
    timeZone: TZ,
    logger: f.logger,
    observer: payments,
  });
}

async function post(accountId: string | null, body: unknown, suffix = '/pix') {
  const res = await fetch(`http://127.0.0.1:${webhooks.port}/provider/webhooks/pix/${accountId}${suffix}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

/** An end-to-end id in the standard's shape (E + 8-digit ISPB + yyyyMMddHHmm + 11 characters). */
const e2eid = () => `E00416968202611241314${randomBytes(6).toString('hex').slice(0, 11)}`;

/** One received PIX, as the standard's Pix schema writes it. */
function pix(txid: string | null, valor: string, devolucoes: unknown[] = []) {
  return {
    endToEndId: e2eid(),
    ...(txid === null ? {} : { txid }),
    valor,
    horario: '2026-11-24T13:14:15.000Z',
    ...(devolucoes.length > 0 ? { devolucoes } : {}),
  };
}

function devolucao(id: string, valor: string, status = 'DEVOLVIDO') {
  return {
    id,
    rtrId: `D00416968202611251000${randomBytes(6).toString('hex').slice(0, 11)}`,
    valor,
    horario: { solicitacao: '2026-11-25T10:00:00.000Z', liquidacao: '2026-11-25T10:00:02.000Z' },
    status,
  };
}

const reais = (cents: number) => (cents / 100).toFixed(2);

/** A consult's answer for a paid cobv (the bank knows the day; the notice brings the time). */
const paidState = (amountPaidCents: number): Extract<ProviderChargeState, { kind: 'paid' }> => ({
  kind: 'paid',
  payment: {
    paidAt: new Date('2026-11-24T03:00:00.000Z'),
    paidAtPrecision: 'date',
    amountPaidCents,
    feeCents: 0,
    method: 'pix',
  },
});

async function noticesOf(chargeId: string) {
  return f.db.selectFrom('bank_notice_log').selectAll().where('charge_id', '=', chargeId).orderBy('id').execute();
}

describe('PIX notices at /provider/webhooks/pix/{accountId}/pix', () => {
  it('stores a payment notice, answers 200, and applies it once the cobv consult confirms it: the bank amount, the notice time, once', async () => {
    const bank = new PixBank();
    const r = await registered(bank);
    const txid = txidFor(r.id);
    expect(r.provider_charge_id).toBe(txid);
    // A forged amount: what counts is what the bank's consult says.
    const notice = { pix: [pix(txid, '9999.99')] };
    expect(await post(r.provider_account_id, notice)).toEqual({ status: 200, body: { stored: 1 } });

    await apply(bank); // the cobv is still ATIVA at the bank: kept
    expect((await rowById(f, r.id)).state).toBe('pending');
    expect((await noticesOf(txid))[0]).toMatchObject({ kind: 'paid', verified: false, outcome: 'not_confirmed' });

    bank.states.set(txid, paidState(r.amount_cents));
    await apply(bank, true);
    const paid = await rowById(f, r.id);
    expect(paid).toMatchObject({ state: 'approved', payment_type: 'pix' });
    expect(Number(paid.amount_paid_cents)).toBe(Number(r.amount_cents));
    expect(paid.payment_date?.toISOString()).toBe('2026-11-24T13:14:15.000Z');
    expect(bank.consultCalls).toEqual([txid, txid]);

    // The bank posts it again (and to the URL without /pix): stored, applied without a consult, nothing new.
    expect(await post(r.provider_account_id, notice, '')).toEqual({ status: 200, body: { stored: 1 } });
    await apply(bank);
    expect(bank.consultCalls).toHaveLength(2);
    expect((await noticesOf(txid)).map((n) => n.outcome)).toEqual(['approved', 'already_paid']);
    const paidCallbacks = (await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.paid');
    expect(paidCallbacks).toHaveLength(1);
    expect((await history(f, r.id)).filter((h) => h.to_state === 'approved')).toHaveLength(1);
  });

  it('answers 200 and stores nothing for PIX that pay no charge of ours: no txid, another txid, an unknown receivable, another bank account', async () => {
    const bank = new PixBank();
    const r = await registered(bank);
    const other = await registered(bank); // another tenant's charge: its txid is ours, its account is not this one
    const body = {
      pix: [
        pix(null, '10.00'),
        pix('E2Ezz9TXIDOFANOTHERSYSTEM000000001', '10.00'),
        pix(txidFor(randomUUID()), '10.00'),
        pix(txidFor(other.id), '10.00'),
      ],
    };
    expect(await post(r.provider_account_id, body)).toEqual({ status: 200, body: { stored: 0 } });
    expect(await noticesOf(txidFor(other.id))).toEqual([]);
  });

  it("keeps an Inter boleto's PIX payment off every cobv: its txid is the bank's, so nothing is stored", async () => {
    const bank = new PixBank();
    const boleto = await registered(bank, 'inter', 1);
    const cobv = await registered(bank, 'inter', 3);
    expect(cobv.provider_account_id).not.toBe(boleto.provider_account_id); // each tenant its own account
    const boletoPix = pix(`INTERBOLETO${randomBytes(10).toString('hex')}`, reais(Number(boleto.amount_cents)));
    expect(await post(boleto.provider_account_id, { pix: [boletoPix] })).toEqual({ status: 200, body: { stored: 0 } });
    await apply(bank, true);
    expect((await rowById(f, boleto.id)).state).toBe('pending');
    expect(bank.consultCalls).toEqual([]);
  });

  it('answers 404 for an account that is not a PIX one and 400 for a body off the standard, storing nothing', async () => {
    const bank = new PixBank();
    const sandboxCharge = await registered(bank, 'sandbox', 1);
    const pixCharge = await registered(bank);
    const txid = txidFor(pixCharge.id);
    expect((await post(randomUUID(), { pix: [pix(txid, '1.00')] })).status).toBe(404);
    expect((await post(sandboxCharge.provider_account_id, { pix: [pix(txid, '1.00')] })).status).toBe(404);
    expect((await post(pixCharge.provider_account_id, 'not json')).status).toBe(400);
    expect((await post(pixCharge.provider_account_id, { pix: [{ txid, valor: '1,00' }] })).status).toBe(400);
    expect(await noticesOf(txid)).toEqual([]);
  });

  it('writes a devolução in the history once, after its payment, as the consult shows it: state and amount paid untouched', async () => {
    const bank = new PixBank();
    const r = await registered(bank);
    const txid = txidFor(r.id);
    const amount = Number(r.amount_cents);
    const refunded = pix(txid, reais(amount), [devolucao('D1', '10.00')]);

    // The devolução's notice comes before the payment is recorded here: it waits for it.
    expect(await post(r.provider_account_id, { pix: [refunded] })).toEqual({ status: 200, body: { stored: 2 } });
    await apply(bank);
    expect((await noticesOf(txid)).map((n) => [n.kind, n.outcome])).toEqual([
      ['paid', 'not_confirmed'],
      ['refunded', 'payment_not_recorded'],
    ]);

    // The consult shows it still in process: kept until it settles.
    const inProcess = { id: 'D1', amountCents: 1_000, status: 'EM_PROCESSAMENTO', at: null, inProcess: true };
    bank.states.set(txid, { ...paidState(amount), refunds: [inProcess] });
    await apply(bank, true);
    await apply(bank, true);
    expect((await noticesOf(txid)).map((n) => [n.kind, n.outcome])).toEqual([
      ['paid', 'approved'],
      ['refunded', 'not_confirmed'],
    ]);
    const refund = { id: 'D1', amountCents: 1_000, status: 'DEVOLVIDO', at: new Date('2026-11-25T10:00:02.000Z') };
    bank.states.set(txid, { ...paidState(amount), refunds: [refund] });
    await apply(bank, true);
    const after = await rowById(f, r.id);
    expect(after).toMatchObject({ state: 'approved' });
    expect(Number(after.amount_paid_cents)).toBe(amount);

    // The bank posts the devolução again: written once.
    expect(await post(r.provider_account_id, { pix: [refunded] })).toEqual({ status: 200, body: { stored: 2 } });
    await apply(bank);
    const entries = (await history(f, r.id)).filter((h) => h.reason.startsWith('devolução'));
    expect(entries).toEqual([
      {
        from_state: 'approved',
        to_state: 'approved',
        reason: 'devolução D1 of R$ 10,00 at the bank, status DEVOLVIDO',
      },
    ]);
    expect((await noticesOf(txid)).filter((n) => n.kind === 'refunded').map((n) => n.outcome)).toEqual([
      'refund_recorded',
      'duplicate',
    ]);
    // No callback for it: the ERP's charge is paid as the bank settled it.
    expect((await callbacksFor(f, r)).map((c) => c.event_type)).toEqual(['receivable.registered', 'receivable.paid']);

    // The history the gateway serves (GET /api/v1/accounts-receivable/{id}/history) shows it.
    const served = await receivableHistory(f.db, r.tenant_id, r.account_receivable_id);
    expect(served.items.map((i) => i.reason)).toContain('devolução D1 of R$ 10,00 at the bank, status DEVOLVIDO');
  });

  it('keeps a devolução the consult does not show (not yet, forged, or a consult that cannot tell), until the list brings it: once', async () => {
    const bank = new PixBank();
    const r = await registered(bank);
    const txid = txidFor(r.id);
    const amount = Number(r.amount_cents);
    bank.states.set(txid, { ...paidState(amount), refunds: [] });
    await post(r.provider_account_id, { pix: [pix(txid, reais(amount), [devolucao('D9', '1.00')])] });
    await apply(bank);
    await apply(bank, true);
    expect((await noticesOf(txid)).map((n) => [n.kind, n.outcome, n.applied_at === null])).toEqual([
      ['paid', 'approved', false],
      ['refunded', 'not_confirmed', true],
    ]);

    bank.states.set(txid, paidState(amount)); // a consult that says nothing of devoluções
    await apply(bank, true);
    expect((await noticesOf(txid))[1]).toMatchObject({ outcome: 'not_confirmed', applied_at: null });
    expect((await history(f, r.id)).filter((h) => h.reason.startsWith('devolução'))).toEqual([]);

    // Reconciliation reads it from the bank's list (verified): written; the kept notice then ends without a consult.
    const listed = parsePixWebhook(JSON.stringify({ pix: [pix(txid, reais(amount), [devolucao('D9', '1.00')])] }));
    await storeNotices(
      f.db,
      await f.accounts.forReceivable(r.provider_account_id),
      'list',
      listed.map((n) => ({ ...n, verified: true })),
    );
    await apply(bank, true);
    const consults = bank.consultCalls.length;
    await apply(bank, true);
    expect(bank.consultCalls).toHaveLength(consults);
    expect((await noticesOf(txid)).filter((n) => n.kind === 'refunded').map((n) => [n.source, n.outcome])).toEqual([
      ['webhook', 'duplicate'],
      ['list', 'refund_recorded'],
    ]);
    expect((await history(f, r.id)).filter((h) => h.reason.startsWith('devolução'))).toEqual([
      { from_state: 'approved', to_state: 'approved', reason: 'devolução D9 of R$ 1,00 at the bank, status DEVOLVIDO' },
    ]);
  });
});
