import { randomUUID } from 'node:crypto';
import type { CancellationJob, RegistrationJob } from '@payments/contracts';
import type { ReceivableRow } from '../src/db/schema';
import { processCancellation, requestCancellation } from '../src/domain/cancellation';
import { storeNotices } from '../src/db/notice-store';
import { applyDueNotices, rearmNoticesOfKnownCharges, type NoticeObserver } from '../src/domain/notices';
import { recordPayment } from '../src/domain/payments';
import type { BankNotice, ProviderAccount } from '../src/domain/ports';
import { registerReceivables } from '../src/domain/registration';
import { parseInterWebhook } from '../src/transport/providers/inter';
import {
  acceptOne,
  callbacksFor,
  history,
  noticesDueNow,
  providersOf,
  rowById,
  scopeOf,
  TestProvider,
  TZ,
  useStateFixture,
  workerDeps,
  type StateFixture,
} from './state-fixture';

// Bank notices stored first and applied by the worker, and cancellation decided under the
// row lock, against a real Postgres. The bank is the domain's PaymentProvider port filled by a test
// double: what it answers to a consult is what each test sets.

let f: StateFixture;
useStateFixture((fixture) => {
  f = fixture;
});

/** What the observer was told, counted. */
class Counted implements NoticeObserver {
  unknown = 0;
  found: string[] = [];
  refunds = 0;
  off: string[] = [];
  unknownCharge() {
    this.unknown += 1;
  }
  foundByReconciliation(kind: 'paid' | 'cancelled') {
    this.found.push(kind);
  }
  needsRefund() {
    this.refunds += 1;
  }
  offAmount(direction: 'below' | 'above') {
    this.off.push(direction);
  }
}

const job = (r: Pick<ReceivableRow, 'id' | 'tenant_id'>): RegistrationJob => ({
  tenant_id: r.tenant_id,
  receivable_ids: [r.id],
});
const cancellationJob = (r: Pick<ReceivableRow, 'id' | 'tenant_id'>): CancellationJob => ({
  tenant_id: r.tenant_id,
  receivable_id: r.id,
  reason: 'requested',
});

async function registered(provider: TestProvider): Promise<ReceivableRow> {
  const r = await acceptOne(f);
  expect(await registerReceivables(workerDeps(f, provider), job(r), 1)).toBe('done');
  return rowById(f, r.id);
}

async function accountOf(r: ReceivableRow): Promise<ProviderAccount> {
  return f.accounts.forReceivable(r.provider_account_id);
}

function notice(chargeId: string, overrides: Partial<BankNotice> = {}): BankNotice {
  return {
    chargeId,
    kind: 'paid',
    situation: 'RECEBIDO',
    at: new Date('2026-11-24T13:14:15.000Z'),
    atPrecision: 'time',
    // A forged amount: what counts is what the bank reports when consulted.
    amountReceivedCents: 999_999,
    method: 'boleto',
    verified: false,
    ...overrides,
  };
}

/** Applies what is due now; `later` first makes every kept notice due (as time passing would). */
async function apply(provider: TestProvider, observer: NoticeObserver, later = false): Promise<void> {
  if (later) await noticesDueNow(f);
  await applyDueNotices({
    db: f.db,
    providers: providersOf(provider),
    accounts: f.accounts,
    timeZone: TZ,
    logger: f.logger,
    observer,
  });
}

async function noticesOf(chargeId: string) {
  return f.db.selectFrom('bank_notice_log').selectAll().where('charge_id', '=', chargeId).orderBy('id').execute();
}

const paidState = (amountPaidCents: number, paidAtPrecision: 'time' | 'date' = 'date') => ({
  kind: 'paid' as const,
  payment: {
    paidAt: new Date('2026-11-24T03:00:00.000Z'),
    paidAtPrecision,
    amountPaidCents,
    feeCents: 0,
    method: 'boleto' as const,
  },
});

describe('bank notices: stored, then applied once the bank confirms them', () => {
  it('keeps a payment notice the bank does not show yet (and while it cannot be asked), and applies it later with the bank amount and the notice time, once', async () => {
    const bank = new TestProvider('inter_');
    const seen = new Counted();
    const r = await registered(bank);
    const chargeId = r.provider_charge_id!;
    expect(await storeNotices(f.db, await accountOf(r), 'webhook', [notice(chargeId)])).toBe(1);

    await apply(bank, seen); // the bank shows it open
    expect((await rowById(f, r.id)).state).toBe('pending');
    let [kept] = await noticesOf(chargeId);
    expect(kept).toMatchObject({ applied_at: null, attempts: 1, outcome: 'not_confirmed' });
    expect(kept.next_attempt_at.getTime()).toBeGreaterThan(Date.now());

    bank.states.set(chargeId, 'unavailable');
    await apply(bank, seen, true);
    [kept] = await noticesOf(chargeId);
    expect(kept).toMatchObject({ applied_at: null, attempts: 2, outcome: 'failed' });

    bank.states.set(chargeId, paidState(r.amount_cents));
    await apply(bank, seen, true);
    const paid = await rowById(f, r.id);
    expect(paid).toMatchObject({ state: 'approved', amount_paid_cents: r.amount_cents, payment_type: 'boleto' });
    // The time is the notice's (the consult knows only the day).
    expect(paid.payment_date?.toISOString()).toBe('2026-11-24T13:14:15.000Z');
    expect((await noticesOf(chargeId))[0]).toMatchObject({ outcome: 'approved' });
    expect((await noticesOf(chargeId))[0].applied_at).toBeInstanceOf(Date);

    // Inter sends it again: stored, applied without asking the bank, no second callback.
    const consults = bank.consultCalls.length;
    await storeNotices(f.db, await accountOf(r), 'webhook', [notice(chargeId)]);
    await apply(bank, seen);
    expect(bank.consultCalls).toHaveLength(consults);
    expect((await noticesOf(chargeId))[1]).toMatchObject({ outcome: 'already_paid' });
    const paidCallbacks = (await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.paid');
    expect(paidCallbacks).toHaveLength(1);
    expect(paidCallbacks[0].payload).toMatchObject({ payment_date: '2026-11-24T10:14:15.000' });
    expect(seen.found).toEqual([]); // a webhook's notice is not reconciliation's finding
  });

  it('keeps a notice for a charge not known yet, counts it once, and applies it once the charge is known', async () => {
    const bank = new TestProvider('inter_');
    const seen = new Counted();
    const r = await acceptOne(f); // queued: no charge id here yet
    const chargeId = `inter_${r.id}`;
    await storeNotices(f.db, await accountOf(r), 'webhook', [notice(chargeId)]);
    bank.states.set(chargeId, paidState(r.amount_cents));

    await apply(bank, seen);
    await apply(bank, seen, true);
    expect(seen.unknown).toBe(1);
    expect(await noticesOf(chargeId)).toEqual([
      expect.objectContaining({ applied_at: null, attempts: 2, outcome: 'unknown_charge' }),
    ]);
    expect(bank.consultCalls).toEqual([]); // nothing asked about a charge that is not ours (yet)

    expect(await registerReceivables(workerDeps(f, bank), job(r), 1)).toBe('done');
    // Its charge known now: due at once, not after the delay it had grown to.
    expect(await rearmNoticesOfKnownCharges(f.db)).toBe(1);
    await apply(bank, seen);
    expect(await rowById(f, r.id)).toMatchObject({ state: 'approved', amount_paid_cents: r.amount_cents });
    expect(seen.unknown).toBe(1);
  });

  it('never applies a notice to a charge of another bank account: it stays kept as unknown', async () => {
    const bank = new TestProvider('inter_');
    const seen = new Counted();
    const mine = await acceptOne(f);
    const other = await registered(bank);
    bank.states.set(other.provider_charge_id!, paidState(other.amount_cents));
    await storeNotices(f.db, await accountOf(mine), 'webhook', [notice(other.provider_charge_id!)]);
    await apply(bank, seen);
    expect((await rowById(f, other.id)).state).toBe('pending');
    expect(bank.consultCalls).toEqual([]);
  });

  it.each([
    ['CANCELADO', 'cancelled'],
    ['EXPIRADO', 'expired'],
  ])(
    '%s: the charge becomes cancelled, the history names it, and the ERP gets one receivable.cancelled callback',
    async (situation) => {
      const bank = new TestProvider('inter_');
      const seen = new Counted();
      const r = await registered(bank);
      const chargeId = r.provider_charge_id!;
      const cancelled = notice(chargeId, { kind: 'cancelled', situation, amountReceivedCents: null, method: null });
      await storeNotices(f.db, await accountOf(r), 'webhook', [cancelled]);
      await apply(bank, seen); // the bank still shows it open: not believed yet
      expect((await rowById(f, r.id)).state).toBe('pending');

      bank.states.set(chargeId, { kind: 'cancelled' });
      await apply(bank, seen, true);
      expect(await rowById(f, r.id)).toMatchObject({ state: 'cancelled', cancel_requested_at: null });
      expect(await history(f, r.id)).toEqual([
        { from_state: 'pending', to_state: 'cancelled', reason: `cancelled at the bank (sandbox: ${situation})` },
      ]);
      await storeNotices(f.db, await accountOf(r), 'webhook', [cancelled]);
      await apply(bank, seen);
      const callbacks = (await callbacksFor(f, r)).filter((c) => c.event_type === 'receivable.cancelled');
      expect(callbacks).toHaveLength(1);
      expect(callbacks[0].payload).toEqual({
        status: 'success',
        accounts_receivable_id: r.account_receivable_id,
        message: `the charge was cancelled at the bank (sandbox: ${situation})`,
      });
    },
  );

  it("with an ERP cancel in flight, the bank's cancellation is that request's one callback", async () => {
    const bank = new TestProvider('inter_');
    const r = await registered(bank);
    const chargeId = r.provider_charge_id!;
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    bank.states.set(chargeId, { kind: 'cancelled' });
    await storeNotices(f.db, await accountOf(r), 'webhook', [
      notice(chargeId, { kind: 'cancelled', situation: 'CANCELADO' }),
    ]);
    await apply(bank, new Counted());
    expect(await processCancellation(workerDeps(f, bank), cancellationJob(r), 1)).toBe('done');
    expect(bank.cancelCalls).toEqual([]); // nothing left to do at the bank
    const callbacks = (await callbacksFor(f, r)).filter((c) => c.event_type.startsWith('receivable.cancel'));
    expect(callbacks.map((c) => [c.event_type, c.event_id])).toEqual([
      ['receivable.cancelled', `evt_cancel1_${r.id.replace(/-/g, '')}`],
    ]);
  });

  it('records a payment below or above the amount due with the amount received, counted by direction and noted in the history', async () => {
    const bank = new TestProvider('inter_');
    const seen = new Counted();
    const under = await registered(bank);
    const over = await registered(bank);
    bank.states.set(under.provider_charge_id!, paidState(under.amount_cents - 1_000));
    bank.states.set(over.provider_charge_id!, paidState(over.amount_cents + 250));
    // Found by a list: the bank's word (verified), a date without a time.
    const listed = (r: ReceivableRow, cents: number) =>
      notice(r.provider_charge_id!, {
        verified: true,
        at: new Date('2026-11-24T03:00:00.000Z'),
        atPrecision: 'date',
        amountReceivedCents: cents,
      });
    await storeNotices(f.db, await accountOf(under), 'list', [listed(under, under.amount_cents - 1_000)]);
    await storeNotices(f.db, await accountOf(over), 'list', [listed(over, over.amount_cents + 250)]);
    await apply(bank, seen);
    expect(bank.consultCalls).toEqual([]); // a list is the bank's own word
    expect(await rowById(f, under.id)).toMatchObject({
      state: 'approved',
      amount_paid_cents: under.amount_cents - 1_000,
    });
    expect(await rowById(f, over.id)).toMatchObject({ state: 'approved', amount_paid_cents: over.amount_cents + 250 });
    expect(seen.off.sort()).toEqual(['above', 'below']);
    expect(seen.found).toEqual(['paid', 'paid']);
    const reais = (c: number) => (c / 100).toFixed(2);
    expect((await history(f, under.id)).at(-1)?.reason).toBe(
      `paid by boleto; the bank reported the payment date only: the time of payment is unknown; ` +
        `${reais(under.amount_cents - 1_000)} received, below the amount due of ${reais(under.amount_cents)}`,
    );
    // 00:00:00 Brasília of the day the list gives.
    const callback = (await callbacksFor(f, under)).find((c) => c.event_type === 'receivable.paid');
    expect(callback?.payload).toMatchObject({ payment_date: '2026-11-24T00:00:00.000' });
    // Listed again by the next sweep: stored once per charge and kind.
    expect(await storeNotices(f.db, await accountOf(under), 'list', [listed(under, 1)])).toBe(0);
  });

  it('a cancel that finds the charge paid records the payment (paid callback) beside its error result', async () => {
    const bank = new TestProvider('inter_');
    const r = await registered(bank);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    bank.cancelOutcome = 'not_open';
    bank.states.set(r.provider_charge_id!, paidState(r.amount_cents + 100));
    expect(await processCancellation(workerDeps(f, bank), cancellationJob(r), 1)).toBe('done');
    await apply(bank, new Counted());
    expect(await rowById(f, r.id)).toMatchObject({ state: 'approved', amount_paid_cents: r.amount_cents + 100 });
    const callbacks = await callbacksFor(f, r);
    expect(callbacks.map((c) => c.event_type).sort()).toEqual([
      'receivable.cancellation_failed',
      'receivable.paid',
      'receivable.registered',
    ]);
  });
});

describe('cancellation decided under the row lock (interleavings at the exact points)', () => {
  it('a payment that lands between the cancel read and its locked re-read: paid callback and the error result, never cancelled', async () => {
    const bank = new TestProvider();
    const r = await registered(bank);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    let landed = false;
    const deps = {
      ...workerDeps(f, bank),
      hooks: {
        afterRead: async () => {
          if (landed) return;
          landed = true;
          // The payment commits here, after the cancel has read the charge as pending.
          expect(
            await recordPayment(
              f.db,
              {
                eventId: `evt-${randomUUID()}`,
                chargeId: r.provider_charge_id!,
                paidAt: new Date(),
                amountPaidCents: r.amount_cents,
                feeCents: 0,
                method: 'pix',
              },
              scopeOf(r),
              TZ,
              f.logger,
            ),
          ).toBe('approved');
          // The bank, asked next, answers "cancelled" (its view of the payment lags): only the locked
          // re-read can tell that the charge is paid here.
        },
      },
    };
    expect(await processCancellation(deps, cancellationJob(r), 1)).toBe('done');
    expect(landed).toBe(true);
    expect(await rowById(f, r.id)).toMatchObject({ state: 'approved', cancel_requested_at: null });
    const events = (await callbacksFor(f, r)).map((c) => c.event_type);
    expect(events).toEqual(['receivable.registered', 'receivable.paid', 'receivable.cancellation_failed']);
    expect(events).not.toContain('receivable.cancelled');
  });

  it('a cancel that lands while the registration is committing cancels the new charge at the bank before telling the ERP', async () => {
    const bank = new TestProvider();
    const r = await acceptOne(f);
    await requestCancellation(f.db, r.tenant_id, r.account_receivable_id);
    let cancelled: Promise<unknown> | undefined;
    const registration = {
      ...workerDeps(f, bank),
      // Inside the registration's results transaction, after its writes, before its commit: the
      // cancel reads the charge as not registered, then waits for the row lock until the commit.
      beforeResultsCommit: async () => {
        let read!: () => void;
        const hasRead = new Promise<void>((resolve) => (read = resolve));
        cancelled = processCancellation(
          {
            ...workerDeps(f, bank),
            hooks: {
              afterRead: async () => read(),
            },
          },
          cancellationJob(r),
          1,
        );
        await hasRead;
        // Give the cancel time to reach its locked re-read, which waits for this commit.
        await new Promise((resolve) => setTimeout(resolve, 200));
      },
    };
    expect(await registerReceivables(registration, job(r), 1)).toBe('done');
    expect(await cancelled).toBe('done');
    const after = await rowById(f, r.id);
    expect(after).toMatchObject({ state: 'cancelled', registration_status: 'registered' });
    // The boleto the registration made is cancelled at the bank before the ERP is told "cancelled".
    expect(bank.cancelCalls).toEqual([after.provider_charge_id]);
    expect((await history(f, r.id)).at(-1)).toEqual({
      from_state: 'pending',
      to_state: 'cancelled',
      reason: 'cancelled at the provider',
    });
  });
});

describe("Inter's notice body (CallbackCobranca) as notices", () => {
  it('reads CANCELADO and EXPIRADO as cancellations, RECEBIDO with its instant, amount and origin; a time without offset is Brasília', () => {
    const body = JSON.stringify([
      { codigoSolicitacao: 'a', situacao: 'CANCELADO', dataHoraSituacao: '2026-11-24T10:00:00.000Z' },
      { codigoSolicitacao: 'b', situacao: 'EXPIRADO', dataHoraSituacao: '2026-11-24' },
      {
        codigoSolicitacao: 'c',
        situacao: 'RECEBIDO',
        dataHoraSituacao: '2026-11-24T10:14:15',
        valorTotalRecebido: '95.10',
        origemRecebimento: 'PIX',
      },
      { codigoSolicitacao: 'd', situacao: 'MARCADO_RECEBIDO', dataHoraSituacao: '2026-11-24T10:14:15-03:00' },
      { codigoSolicitacao: 'e', situacao: 'A_RECEBER', dataHoraSituacao: '2026-11-24T10:14:15Z' },
    ]);
    expect(
      parseInterWebhook(body).map(({ chargeId, kind, at, atPrecision, amountReceivedCents, method }) => ({
        chargeId,
        kind,
        at: at?.toISOString(),
        atPrecision,
        amountReceivedCents,
        method,
      })),
    ).toEqual([
      {
        chargeId: 'a',
        kind: 'cancelled',
        at: '2026-11-24T10:00:00.000Z',
        atPrecision: 'time',
        amountReceivedCents: null,
        method: null,
      },
      {
        chargeId: 'b',
        kind: 'cancelled',
        at: '2026-11-24T03:00:00.000Z',
        atPrecision: 'date',
        amountReceivedCents: null,
        method: null,
      },
      {
        chargeId: 'c',
        kind: 'paid',
        at: '2026-11-24T13:14:15.000Z',
        atPrecision: 'time',
        amountReceivedCents: 9_510,
        method: 'pix',
      },
      {
        chargeId: 'd',
        kind: 'paid',
        at: '2026-11-24T13:14:15.000Z',
        atPrecision: 'time',
        amountReceivedCents: null,
        method: 'manual',
      },
      {
        chargeId: 'e',
        kind: 'other',
        at: '2026-11-24T10:14:15.000Z',
        atPrecision: 'time',
        amountReceivedCents: null,
        method: null,
      },
    ]);
  });
});
