import type { Kysely, Transaction } from 'kysely';
import type { Logger } from '@payments/logger';
import { messageIds, ServiceError, Streams, type CancellationJob, type JobOutcome } from '@payments/contracts';
import { enqueue } from '@payments/outbox';
import type { ReceivableRow, ReceivablesDatabase } from '../db/schema';
import {
  bankCancelledCallback,
  callbackMessages,
  cancellationFailedCallback,
  cancelledCallback,
} from './callback-messages';
import { backoff } from './job-outcome';
import { storeNotices } from '../db/notice-store';
import { chargeInScope, type ChargeScope } from './payments';
import {
  ProviderUnavailableError,
  type CancellationOutcome,
  type PaymentProviders,
  type ProviderAccounts,
} from './ports';
import { recordTransition } from './state-history';

const REFUSALS: Partial<Record<ReceivableRow['state'], string>> = {
  cancelled: 'the receivable is already cancelled',
  approved: 'the receivable is paid and can no longer be cancelled',
  rejected: 'the receivable was rejected by the provider; there is nothing to cancel',
};

/**
 * Queues the cancellation of a receivable (answered 202). Refused (409) once it is cancelled, paid or
 * rejected; a cancellation already queued is accepted again without queueing a second one.
 */
export async function requestCancellation(
  db: Kysely<ReceivablesDatabase>,
  tenantId: string,
  accountReceivableId: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('receivables')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('account_receivable_id', '=', accountReceivableId)
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw new ServiceError('not_found', `no receivable ${accountReceivableId}`);
    const refusal = REFUSALS[row.state];
    if (refusal) throw new ServiceError('conflict', refusal);
    if (row.cancel_requested_at !== null) return;
    const updated = await trx
      .updateTable('receivables')
      .set((eb) => ({
        cancel_requested_at: new Date(),
        cancellation_requests: eb('cancellation_requests', '+', 1),
        updated_at: new Date(),
      }))
      .where('id', '=', row.id)
      .returning(['id', 'tenant_id', 'cancellation_requests'])
      .executeTakeFirstOrThrow();
    await enqueue(trx, [
      {
        stream: Streams.receivableCancellations,
        msgId: messageIds.cancellationRequest(row.id, updated.cancellation_requests),
        payload: { tenant_id: tenantId, receivable_id: row.id, reason: 'requested' },
      },
    ]);
  });
}

export interface CancellationDeps {
  db: Kysely<ReceivablesDatabase>;
  providers: PaymentProviders;
  accounts: ProviderAccounts;
  logger: Logger;
  /** Wakes the notice worker after a notice was stored (a payment the cancel found); optional. */
  onNotice?: () => void;
  /** Test hooks at the exact points where another transaction can interleave; unset in production. */
  hooks?: CancellationHooks;
}

/** Called at points where a concurrent payment or registration may commit (the interleaving tests). */
export interface CancellationHooks {
  /** After the cancellation's first (unlocked) read, before the bank is asked and the row is locked. */
  afterRead?(receivableId: string): Promise<void>;
}

/** What the provider is told (the adapter maps it to the bank's own reason codes). */
export const CancellationReasons = { requested: 'requested by the ERP', cleanup: 'cleanup' } as const;

/** Times a cancellation decides again when its locked re-read shows the charge registered meanwhile. */
const DECISION_ROUNDS = 3;

/** Cancels the charge at the provider, with the account it was registered under. */
async function cancelAtProvider(
  deps: CancellationDeps,
  row: Pick<ReceivableRow, 'provider_account_id'>,
  chargeId: string,
  reason: string,
): Promise<CancellationOutcome> {
  const account = await deps.accounts.forReceivable(row.provider_account_id);
  return deps.providers[account.provider].cancel(account, chargeId, reason);
}

/** The charge id at the bank when the receivable is open and registered there (what a cancel must reach). */
function liveAtBank(row: Pick<ReceivableRow, 'state' | 'registration_status' | 'provider_charge_id'>): string | null {
  return row.state === 'pending' && row.registration_status === 'registered' ? row.provider_charge_id : null;
}

/**
 * Carries out a queued cancellation: at the provider when the charge is registered there, then the
 * callback. The decision is made again from a locked re-read: a registration that committed after the
 * first read (the bank was not asked) is decided again, so the ERP is never told "cancelled" while the
 * boleto stays live; a payment that committed meanwhile gets the cancel's error result (its paid
 * callback was queued by the payment).
 */
export async function processCancellation(
  deps: CancellationDeps,
  job: CancellationJob,
  deliveryCount: number,
): Promise<JobOutcome> {
  for (let round = 0; round < DECISION_ROUNDS; round += 1) {
    const row = await deps.db
      .selectFrom('receivables')
      .selectAll()
      .where('id', '=', job.receivable_id)
      .where('tenant_id', '=', job.tenant_id)
      .executeTakeFirst();
    if (!row) return 'done';
    if (job.reason === 'cleanup') return cleanUp(deps, row, deliveryCount);
    if (row.cancel_requested_at === null) return 'done'; // already carried out
    await deps.hooks?.afterRead?.(row.id);

    const atBank = liveAtBank(row);
    let outcome: CancellationOutcome = 'cancelled';
    if (atBank) {
      try {
        outcome = await cancelAtProvider(deps, row, atBank, CancellationReasons.requested);
      } catch (err) {
        if (err instanceof ProviderUnavailableError) return backoff(deliveryCount);
        throw err;
      }
      // Paid at the bank first: the payment is recorded (its paid callback) beside the cancel's error result.
      if (outcome === 'not_open') await recordPaymentFoundByCancel(deps, row, atBank);
    }
    const decided = await deps.db.transaction().execute((trx) => settleCancellation(trx, row.id, atBank, outcome));
    if (decided === 'settled') return 'done';
  }
  // Registered again and again under our feet: let the job come back later rather than spin.
  return backoff(deliveryCount);
}

/** The locked re-read and the result; 'again' when the charge got registered at the bank since it was read. */
async function settleCancellation(
  trx: Transaction<ReceivablesDatabase>,
  id: string,
  askedAtBank: string | null,
  outcome: CancellationOutcome,
): Promise<'settled' | 'again'> {
  const current = await trx
    .selectFrom('receivables')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (current.cancel_requested_at === null) return 'settled'; // carried out meanwhile (e.g. the bank cancelled it)
  const live = liveAtBank(current);
  if (live !== null && live !== askedAtBank) return 'again';
  const cleared = { cancel_requested_at: null, updated_at: new Date() };
  if (current.state !== 'pending' || outcome !== 'cancelled') {
    // Paid (or rejected) while the cancellation waited, or the provider refuses: it stays as it is.
    const after = await trx
      .updateTable('receivables')
      .set(cleared)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const reason =
      current.state === 'approved' || outcome === 'not_open'
        ? 'the receivable was paid before it could be cancelled'
        : current.state === 'pending' && outcome === 'refused'
          ? 'the provider refused to cancel the charge; it stays open'
          : (REFUSALS[current.state] ?? 'the receivable can no longer be cancelled');
    await enqueue(trx, callbackMessages([cancellationFailedCallback(after, reason)]));
    return 'settled';
  }
  const after = await trx
    .updateTable('receivables')
    .set({ ...cleared, state: 'cancelled' })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordTransition(
    trx,
    [after],
    'pending',
    'cancelled',
    askedAtBank ? 'cancelled at the provider' : 'cancelled before registration',
  );
  await enqueue(trx, callbackMessages([cancelledCallback(after)]));
  return 'settled';
}

/**
 * The bank refused the cancel because the charge is paid: the payment is stored as a notice of it, and
 * the notice worker records it as any notice (the bank consulted for its amount and date, once).
 */
async function recordPaymentFoundByCancel(deps: CancellationDeps, row: ReceivableRow, chargeId: string): Promise<void> {
  // A legacy sandbox charge (no account) is paid by the sandbox's own signed notice.
  if (row.provider_account_id === null) return;
  const account = await deps.accounts.forReceivable(row.provider_account_id);
  await storeNotices(deps.db, account, 'cancel', [
    {
      chargeId,
      kind: 'paid',
      situation: 'paid (found by the cancel)',
      at: null,
      atPrecision: 'time',
      amountReceivedCents: null,
      method: null,
      verified: false,
    },
  ]);
  deps.onNotice?.();
}

/** Outcome of a cancellation the bank made (or an expiry), as a notice or reconciliation reports it. */
export type BankCancellationRecord = 'cancelled' | 'duplicate' | 'already_cancelled' | 'not_open';

/**
 * The bank cancelled the charge or let it expire (Inter: CANCELADO, EXPIRADO): the receivable becomes
 * cancelled, the history names the bank's situation, and the ERP gets one receivable.cancelled callback
 * (with an ERP cancel in flight, as that request's answer: its job then finds nothing left to do).
 * Counted once per event. A charge paid or rejected here stays so ('not_open'). An unknown charge is
 * a ServiceError not_found (kept and retried by the caller).
 */
export async function recordBankCancellation(
  db: Kysely<ReceivablesDatabase>,
  scope: Exclude<ChargeScope, 'legacy'>,
  event: { eventId: string; chargeId: string; situation: string },
): Promise<BankCancellationRecord> {
  return db.transaction().execute(async (trx) => {
    const fresh = await trx
      .insertInto('provider_events')
      .values({ event_id: event.eventId, provider_account_id: scope.accountId })
      .onConflict((oc) => oc.column('event_id').doNothing())
      .returning('event_id')
      .executeTakeFirst();
    if (!fresh) return 'duplicate';
    const row = await chargeInScope(trx, scope, event.chargeId).forUpdate().executeTakeFirst();
    if (!row) throw new ServiceError('not_found', `no receivable for provider charge ${event.chargeId}`);
    if (row.state === 'cancelled') return 'already_cancelled';
    if (row.state !== 'pending') return 'not_open';
    const answersRequest = row.cancel_requested_at !== null;
    const after = await trx
      .updateTable('receivables')
      .set({ state: 'cancelled', cancel_requested_at: null, updated_at: new Date() })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordTransition(trx, [after], 'pending', 'cancelled', `cancelled at the bank (${event.situation})`);
    const message = `the charge was cancelled at the bank (${event.situation})`;
    await enqueue(trx, callbackMessages([bankCancelledCallback(after, message, answersRequest)]));
    return 'cancelled';
  });
}

async function cleanUp(deps: CancellationDeps, row: ReceivableRow, deliveryCount: number): Promise<JobOutcome> {
  if (!row.provider_charge_id) return 'done';
  try {
    const outcome = await cancelAtProvider(deps, row, row.provider_charge_id, CancellationReasons.cleanup);
    const where = { receivableId: row.id, chargeId: row.provider_charge_id, outcome };
    if (outcome === 'cancelled')
      deps.logger.info(where, 'cancelled a charge registered after its receivable was cancelled');
    // Nothing more to try: an operator settles it with the payer (a payment is kept for a refund decision).
    else deps.logger.warn(where, 'could not cancel a charge registered after its receivable was cancelled');
    return 'done';
  } catch (err) {
    if (err instanceof ProviderUnavailableError) return backoff(deliveryCount);
    throw err;
  }
}
