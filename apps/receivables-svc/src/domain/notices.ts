import { sql, type Kysely, type Selectable } from 'kysely';
import type { Logger } from '@payments/logger';
import { ServiceError } from '@payments/contracts';
import type { BankNoticesTable, ReceivablesDatabase } from '../db/schema';
import { recordBankCancellation } from './cancellation';
import {
  chargeEventId,
  findCharge,
  eventRecorded,
  recordPayment,
  recordRefund,
  refundEventId,
  type ChargeScope,
  type PaymentObserver,
} from './payments';
import {
  ProviderUnavailableError,
  type ProviderRefund,
  type PaymentProviders,
  type ProviderAccount,
  type ProviderAccounts,
  type ProviderChargeState,
  type ProviderPayment,
} from './ports';

/**
 * Bank notices, stored first and applied after: a bank's notice is answered 2xx once it is
 * stored, whatever happens next. A worker applies stored notices one at a time per notice (FOR UPDATE
 * SKIP LOCKED: any number of instances), and keeps those that cannot be applied yet (a charge not known
 * yet, a payment the bank does not show yet, a bank that cannot be asked) for another attempt after a
 * growing delay. Nothing is dropped. Reconciliation stores what it finds here too, so a notice and a
 * list finding the same payment go through one path and count once (event ids per charge and kind).
 * A refund made at the bank (a PIX devolução) is written in the charge's history once per refund id,
 * after its payment was recorded here (until then it waits), and only as the bank shows it.
 */

type NoticeRow = Selectable<BankNoticesTable>;

/** First retry after this long, doubling up to NOTICE_RETRY_MAX_MS. */
export const NOTICE_RETRY_BASE_MS = 2_000;
/** A notice waiting for its charge or for the bank is tried at least this often. */
export const NOTICE_RETRY_MAX_MS = 3_600_000;

/** What the notice worker reports (metrics): the domain knows no metrics library. */
export interface NoticeObserver extends PaymentObserver {
  /** A notice named a charge not known here (counted once per notice, however often it is retried). */
  unknownCharge(): void;
  /** Reconciliation found a change the notices had not brought (kind: paid or cancelled). */
  foundByReconciliation(kind: 'paid' | 'cancelled'): void;
  /** A payment for a charge cancelled or rejected here, kept for a refund decision. */
  needsRefund(): void;
}

export interface NoticeDeps {
  db: Kysely<ReceivablesDatabase>;
  providers: PaymentProviders;
  accounts: ProviderAccounts;
  timeZone: string;
  logger: Logger;
  observer?: NoticeObserver;
  /** Wakes the outbox relay after a notice queued callbacks. */
  onEnqueued?: () => void;
}

/** What applying one notice came to: final (applied, never tried again) or kept for another attempt. */
interface Attempt {
  final: boolean;
  outcome: string;
  error?: string;
}

/**
 * Applies due notices, one after another, until none is due or `limit` were tried. Returns how many
 * were tried.
 */
export async function applyDueNotices(deps: NoticeDeps, limit = 50): Promise<number> {
  let tried = 0;
  while (tried < limit) {
    const done = await applyNextNotice(deps);
    if (!done) break;
    tried += 1;
  }
  return tried;
}

/**
 * Notices kept for a charge not known then whose charge is known now (its registration committed)
 * fall due at once, rather than after their grown delay. Returns how many.
 */
export async function rearmNoticesOfKnownCharges(db: Kysely<ReceivablesDatabase>): Promise<number> {
  const result = await sql`
    update bank_notices n set next_attempt_at = now()
    where n.applied_at is null and n.outcome = 'unknown_charge' and n.next_attempt_at > now()
      and exists (
        select 1 from receivables r join provider_accounts pa on pa.id = r.provider_account_id
        where r.provider_charge_id = n.charge_id and pa.tenant_id = n.tenant_id and pa.account_key = n.account_key
      )`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Claims one due notice (others skip it), applies it, and marks it applied or schedules its retry. */
async function applyNextNotice(deps: NoticeDeps): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const notice = await trx
      .selectFrom('bank_notices')
      .selectAll()
      .where('applied_at', 'is', null)
      // The database's clock, as stored notices' next_attempt_at default is (finer than a JS Date).
      .where('next_attempt_at', '<=', sql<Date>`now()`)
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(1)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!notice) return false;
    let attempt: Attempt;
    try {
      attempt = await applyNotice(deps, notice);
    } catch (err) {
      // Whatever failed (the bank away, Postgres hiccup): kept and tried again later, never dropped.
      const reason = err instanceof Error ? err.message : String(err);
      attempt = { final: false, outcome: 'failed', error: reason.slice(0, 500) };
      if (!(err instanceof ProviderUnavailableError))
        deps.logger.warn({ noticeId: notice.id, chargeId: notice.charge_id, err }, 'bank notice not applied; retried');
    }
    const delayMs = Math.min(NOTICE_RETRY_MAX_MS, NOTICE_RETRY_BASE_MS * 2 ** Math.min(notice.attempts, 20));
    await trx
      .updateTable('bank_notices')
      .set({
        attempts: sql`attempts + 1`,
        outcome: attempt.outcome,
        last_error: attempt.error ?? null,
        ...(attempt.final ? { applied_at: new Date() } : { next_attempt_at: new Date(Date.now() + delayMs) }),
      })
      .where('id', '=', notice.id)
      .execute();
    return true;
  });
}

async function applyNotice(deps: NoticeDeps, notice: NoticeRow): Promise<Attempt> {
  const account = await deps.accounts.find(notice.provider_account_id);
  if (!account) return { final: true, outcome: 'no_account' };
  const scope = { accountId: account.id, tenantId: account.tenantId };
  const charge = await findCharge(deps.db, scope, notice.charge_id);
  if (!charge) {
    // Our registration may not be committed yet, or the charge id is not kept yet: kept and retried.
    if (notice.attempts === 0) deps.observer?.unknownCharge();
    return { final: false, outcome: 'unknown_charge' };
  }
  if (notice.kind === 'other') return { final: true, outcome: 'ignored' };
  if (notice.kind === 'refunded') return applyRefund(deps, account, scope, notice);
  if (notice.kind === 'paid' && charge.state === 'approved') return { final: true, outcome: 'already_paid' };
  if (notice.kind === 'cancelled' && charge.state !== 'pending')
    return { final: true, outcome: charge.state === 'cancelled' ? 'already_cancelled' : 'not_open' };

  const confirmed = await confirm(deps, account, notice);
  if (!confirmed) return { final: false, outcome: 'not_confirmed' };
  try {
    if (confirmed.kind === 'paid') {
      const result = await recordPayment(
        deps.db,
        { eventId: chargeEventId(account, notice.charge_id, 'paid'), chargeId: notice.charge_id, ...confirmed.payment },
        scope,
        deps.timeZone,
        deps.logger,
        deps.observer,
      );
      if (result === 'needs_refund') deps.observer?.needsRefund();
      if (result === 'approved' || result === 'needs_refund') changed(deps, notice, 'paid');
      return { final: true, outcome: result };
    }
    const result = await recordBankCancellation(deps.db, scope, {
      eventId: chargeEventId(account, notice.charge_id, 'cancelled'),
      chargeId: notice.charge_id,
      situation: `${account.provider}: ${notice.situation}`,
    });
    if (result === 'cancelled') changed(deps, notice, 'cancelled');
    return { final: true, outcome: result };
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'not_found') return { final: false, outcome: 'unknown_charge' };
    throw err;
  }
}

/**
 * A refund notice: written in the charge's history once its payment is recorded here (before that it
 * waits: the payment's own notice or the next sweep brings it). The bank's word decides: a refund read
 * from its list is believed as it is (the sweep lists only settled ones); a webhook's is looked for in
 * the charge's consult, and kept while the consult does not show it settled (not yet, or a consult that
 * cannot tell refunds: the list may bring it).
 */
async function applyRefund(
  deps: NoticeDeps,
  account: ProviderAccount,
  scope: Exclude<ChargeScope, 'legacy'>,
  notice: NoticeRow,
): Promise<Attempt> {
  if (notice.refund_id === null) return { final: true, outcome: 'ignored' };
  const eventId = refundEventId(account, notice.charge_id, notice.refund_id);
  // Written already (the list and the webhook both tell it): nothing to ask the bank.
  if (await eventRecorded(deps.db, eventId)) return { final: true, outcome: 'duplicate' };
  if (!(await eventRecorded(deps.db, chargeEventId(account, notice.charge_id, 'paid'))))
    return { final: false, outcome: 'payment_not_recorded' };
  const refund = await confirmRefund(deps, account, notice, notice.refund_id);
  if (!refund) return { final: false, outcome: 'not_confirmed' };
  try {
    const result = await recordRefund(deps.db, { ...refund, eventId, chargeId: notice.charge_id }, scope);
    return { final: true, outcome: result };
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'not_found') return { final: false, outcome: 'unknown_charge' };
    throw err;
  }
}

/** The refund as the bank has it: the list's own word, or the consult's; null when the bank does not show it. */
async function confirmRefund(
  deps: NoticeDeps,
  account: ProviderAccount,
  notice: NoticeRow,
  refundId: string,
): Promise<ProviderRefund | null> {
  if (notice.verified && notice.amount_received_cents !== null)
    return {
      id: refundId,
      amountCents: Number(notice.amount_received_cents),
      status: notice.situation,
      at: notice.situation_at,
    };
  const state = await deps.providers[account.provider].consult(account, notice.charge_id);
  if (state.kind !== 'paid') return null;
  const refund = state.refunds?.find((r) => r.id === refundId);
  // Still in process at the bank: kept until it settles (its notice may have come early).
  return refund && !refund.inProcess ? refund : null;
}

/** A change was made: the relay is woken, and a change only reconciliation brought is counted. */
function changed(deps: NoticeDeps, notice: NoticeRow, kind: 'paid' | 'cancelled'): void {
  deps.onEnqueued?.();
  if (notice.source === 'list' || notice.source === 'history') deps.observer?.foundByReconciliation(kind);
}

type Confirmed = { kind: 'paid'; payment: Omit<ProviderPayment, 'eventId' | 'chargeId'> } | { kind: 'cancelled' };

/**
 * What the bank confirms of a notice: a notice read from the bank's own API (reconciliation) with
 * what a payment needs is believed as it is; any other is confirmed by consulting the charge, which
 * decides (a payment the consult shows is recorded, whatever the notice said). Null: not confirmed
 * (yet): the notice is kept and tried again.
 */
async function confirm(deps: NoticeDeps, account: ProviderAccount, notice: NoticeRow): Promise<Confirmed | null> {
  if (notice.verified && notice.kind === 'cancelled') return { kind: 'cancelled' };
  if (
    notice.verified &&
    notice.kind === 'paid' &&
    notice.situation_at !== null &&
    notice.amount_received_cents !== null &&
    notice.payment_method !== null
  )
    return {
      kind: 'paid',
      payment: {
        paidAt: notice.situation_at,
        paidAtPrecision: notice.situation_at_precision,
        amountPaidCents: Number(notice.amount_received_cents),
        feeCents: 0,
        method: notice.payment_method,
      },
    };
  const state: ProviderChargeState = await deps.providers[account.provider].consult(account, notice.charge_id);
  if (state.kind === 'paid') {
    // The amount is the bank's (valorTotalRecebido as it reports it); the time the notice's when it
    // gives one (the consult knows only the day).
    const exact = notice.situation_at !== null && notice.situation_at_precision === 'time' && notice.kind === 'paid';
    return {
      kind: 'paid',
      payment: exact
        ? { ...state.payment, paidAt: notice.situation_at as Date, paidAtPrecision: 'time' }
        : state.payment,
    };
  }
  if (state.kind === 'cancelled' && notice.kind === 'cancelled') return { kind: 'cancelled' };
  return null;
}
