import type { Kysely, SelectQueryBuilder, Transaction } from 'kysely';
import type { Logger } from '@payments/logger';
import { formatReais } from '@payments/br-format';
import { ServiceError, type ReceivableState } from '@payments/contracts';
import { enqueue } from '@payments/outbox';
import type { ReceivableRow, ReceivablesDatabase } from '../db/schema';
import { callbackMessages, paidCallback } from './callback-messages';
import { formatLocalDateTime } from './local-datetime';
import type { ProviderAccount, ProviderPayment, ProviderRefund } from './ports';
import { recordTransition } from './state-history';

/**
 * What a provider's payment came to: the charge approved; the event already applied; the charge
 * already paid; or money taken for a charge the provider had cancelled or rejected, kept for a refund.
 */
export type PaymentRecord = 'approved' | 'duplicate' | 'already_paid' | 'needs_refund';

/**
 * Which charges a provider notice may name: those registered under the bank account of one provider
 * account version (any version of the tenant with its account key: a renewed certificate is the same
 * account), or the legacy ones, registered with the sandbox before accounts existed. A real bank's
 * charge ids are unique per account only, so a notice is never matched outside its scope.
 */
export type ChargeScope = { accountId: string; tenantId: string } | 'legacy';

type ChargeQuery = SelectQueryBuilder<ReceivablesDatabase, 'receivables', object>;

/** Restricts a query on receivables to a scope: the tenant, and the versions of the scope's bank account. */
function inScope<Q extends ChargeQuery>(query: Q, scope: ChargeScope): Q {
  if (scope === 'legacy') return query.where('provider_account_id', 'is', null) as Q;
  return query.where('receivables.tenant_id', '=', scope.tenantId).where('provider_account_id', 'in', (eb) =>
    eb
      .selectFrom('provider_accounts as same')
      .select('same.id')
      .where('same.tenant_id', '=', scope.tenantId)
      .where('same.account_key', '=', (k) =>
        k.selectFrom('provider_accounts as named').select('named.account_key').where('named.id', '=', scope.accountId),
      ),
  ) as Q;
}

/**
 * Applies a payment the provider reports: the receivable becomes approved with payment date, amount
 * paid, fee and payment type, and the paid callback is queued. Each provider event counts once.
 * A cancellation still queued stays queued: its job then answers the ERP's cancel with an error
 * callback (paid before it could be cancelled), so every accepted cancel gets its one result.
 * A charge the provider had already cancelled, or had rejected, is not revived by a payment: the ERP
 * was told it is void. The money is kept in payments_needing_refund, the charge keeps its state, no
 * callback is sent, and an operator is warned to decide on a refund ('needs_refund').
 * An unknown charge is an error, so the provider retries (our registration may not be committed yet).
 */
export async function recordPayment(
  db: Kysely<ReceivablesDatabase>,
  payment: ProviderPayment,
  scope: ChargeScope,
  timeZone: string,
  logger: Logger,
  observer?: PaymentObserver,
): Promise<PaymentRecord> {
  const outcome = await db.transaction().execute(async (trx): Promise<PaymentOutcome> => {
    const fresh = await trx
      .insertInto('provider_events')
      .values({ event_id: payment.eventId, provider_account_id: scope === 'legacy' ? null : scope.accountId })
      .onConflict((oc) => oc.column('event_id').doNothing())
      .returning('event_id')
      .executeTakeFirst();
    if (!fresh) return { result: 'duplicate' };
    const row = await chargeInScope(trx, scope, payment.chargeId).forUpdate().executeTakeFirst();
    if (!row) throw new ServiceError('not_found', `no receivable for provider charge ${payment.chargeId}`);
    if (row.state === 'approved') return { result: 'already_paid' };
    if (row.state === 'cancelled' || row.state === 'rejected') {
      await keepForRefund(trx, row, row.state, payment);
      return { result: 'needs_refund', row, chargeState: row.state };
    }
    const after = await trx
      .updateTable('receivables')
      .set({
        state: 'approved',
        payment_date: payment.paidAt,
        amount_paid_cents: payment.amountPaidCents,
        fee_cents: payment.feeCents,
        payment_type: payment.method,
        updated_at: new Date(),
      })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const offBy = offAmount(payment.amountPaidCents, row.amount_cents);
    await recordTransition(trx, [after], row.state, 'approved', paymentReason(payment, row.amount_cents, offBy));
    await enqueue(trx, callbackMessages([paidCallback(after, formatLocalDateTime(payment.paidAt, timeZone))]));
    return { result: 'approved', offBy };
  });
  // After the commit: a rolled-back payment was never recorded.
  if (outcome.result === 'approved' && outcome.offBy) observer?.offAmount(outcome.offBy);
  if (outcome.result === 'needs_refund') {
    // Ids and amounts only: an operator finds the payer through the receivable, never in the log.
    logger.warn(
      {
        receivableId: outcome.row.id,
        tenantId: outcome.row.tenant_id,
        providerAccountId: outcome.row.provider_account_id,
        providerChargeId: payment.chargeId,
        chargeState: outcome.chargeState,
        eventId: payment.eventId,
        paidAt: payment.paidAt.toISOString(),
        amountPaidCents: payment.amountPaidCents,
        method: payment.method,
      },
      `payment received for a ${outcome.chargeState} charge: kept for a refund decision, the charge stays ${outcome.chargeState}`,
    );
  }
  return outcome.result;
}

/** Who watches recorded payments (metrics): the domain knows no metrics library. */
export interface PaymentObserver {
  /** A payment below or above the amount due was recorded as paid, with the amount received. */
  offAmount(direction: 'below' | 'above'): void;
}

/** Whether the bank received less or more than the amount due (null: exactly that). */
function offAmount(receivedCents: number, dueCents: number): 'below' | 'above' | null {
  if (receivedCents === dueCents) return null;
  return receivedCents < dueCents ? 'below' : 'above';
}

const reais = (cents: number) => (cents / 100).toFixed(2);

/** The history's reason for a payment: how it was paid, what the bank did not say, and any difference to the amount due. */
function paymentReason(payment: ProviderPayment, dueCents: number, offBy: 'below' | 'above' | null): string {
  const parts = [`paid by ${payment.method}`];
  if (payment.paidAtPrecision === 'date')
    parts.push('the bank reported the payment date only: the time of payment is unknown');
  if (offBy) parts.push(`${reais(payment.amountPaidCents)} received, ${offBy} the amount due of ${reais(dueCents)}`);
  return parts.join('; ');
}

type PaymentOutcome =
  | { result: 'approved'; offBy: 'below' | 'above' | null }
  | { result: Exclude<PaymentRecord, 'needs_refund' | 'approved'> }
  | { result: 'needs_refund'; row: ReceivableRow; chargeState: 'cancelled' | 'rejected' };

/** The payment's facts beside the charge they were meant for, for the operator who decides on a refund. */
async function keepForRefund(
  trx: Transaction<ReceivablesDatabase>,
  row: ReceivableRow,
  chargeState: 'cancelled' | 'rejected',
  payment: ProviderPayment,
): Promise<void> {
  await trx
    .insertInto('payments_needing_refund')
    .values({
      event_id: payment.eventId,
      receivable_id: row.id,
      tenant_id: row.tenant_id,
      provider_account_id: row.provider_account_id,
      provider_charge_id: payment.chargeId,
      charge_state: chargeState,
      paid_at: payment.paidAt,
      amount_paid_cents: payment.amountPaidCents,
      fee_cents: payment.feeCents,
      payment_type: payment.method,
    })
    .execute();
}

/** The receivable of a provider charge id within a scope, as a query (the caller may lock it). */
export function chargeInScope(trx: Transaction<ReceivablesDatabase>, scope: ChargeScope, chargeId: string) {
  return inScope(trx.selectFrom('receivables').selectAll().where('provider_charge_id', '=', chargeId), scope);
}

/**
 * The event id of what happened to a charge at its bank (kind: paid, cancelled): one per bank account
 * (every version of it), charge and kind, whoever reports it (a notice, a list, the cancel itself),
 * so it is applied once.
 */
export function chargeEventId(
  account: Pick<ProviderAccount, 'provider' | 'tenantId' | 'accountKey'>,
  chargeId: string,
  kind: 'paid' | 'cancelled',
): string {
  return `${account.provider}:${account.tenantId}:${account.accountKey}:${chargeId}:${kind}`;
}

/**
 * The event id of a refund of a charge's payment made at its bank (PIX: a devolução): one per bank
 * account, charge and refund id, whoever reports it (the webhook, the list), so it is written once.
 */
export function refundEventId(
  account: Pick<ProviderAccount, 'provider' | 'tenantId' | 'accountKey'>,
  chargeId: string,
  refundId: string,
): string {
  return `${account.provider}:${account.tenantId}:${account.accountKey}:${chargeId}:refund:${refundId}`;
}

/** What a refund came to: written in the charge's history, or written before (the event applied already). */
export type RefundRecord = 'refund_recorded' | 'duplicate';

/**
 * Writes a refund made at the bank in its charge's history, once per refund (event id): "devolução
 * <id> of R$ x,xx at the bank, status <the bank's>", with the charge's state as both ends. The charge's
 * state, amount paid and callbacks are untouched: the money went back at the bank, outside our hands,
 * and the ERP's view of the charge (paid) stays as the bank settled it. An unknown charge is an error
 * (not_found), as for payments.
 */
export async function recordRefund(
  db: Kysely<ReceivablesDatabase>,
  refund: ProviderRefund & { eventId: string; chargeId: string },
  scope: ChargeScope,
): Promise<RefundRecord> {
  return db.transaction().execute(async (trx): Promise<RefundRecord> => {
    const row = await chargeInScope(trx, scope, refund.chargeId).forUpdate().executeTakeFirst();
    if (!row) throw new ServiceError('not_found', `no receivable for provider charge ${refund.chargeId}`);
    const fresh = await trx
      .insertInto('provider_events')
      .values({ event_id: refund.eventId, provider_account_id: scope === 'legacy' ? null : scope.accountId })
      .onConflict((oc) => oc.column('event_id').doNothing())
      .returning('event_id')
      .executeTakeFirst();
    if (!fresh) return 'duplicate';
    await recordTransition(trx, [row], row.state, row.state, refundReason(refund));
    return 'refund_recorded';
  });
}

/** The history's words for a refund at the bank (PIX's own name for it: devolução). */
export function refundReason(refund: Pick<ProviderRefund, 'id' | 'amountCents' | 'status'>): string {
  return `devolução ${refund.id} of ${formatReais(refund.amountCents)} at the bank, status ${refund.status}`;
}

/** Whether a provider event was applied here (a payment: whatever the charge's state is now). */
export async function eventRecorded(db: Kysely<ReceivablesDatabase>, eventId: string): Promise<boolean> {
  const row = await db
    .selectFrom('provider_events')
    .select('event_id')
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The event id of a charge's payment at its bank (see chargeEventId). */
export function paymentEventId(
  account: Pick<ProviderAccount, 'provider' | 'tenantId' | 'accountKey'>,
  chargeId: string,
) {
  return chargeEventId(account, chargeId, 'paid');
}

/** A charge of this scope, by the provider's id: enough to decide whether a notice needs the bank asked. */
export async function findCharge(
  db: Kysely<ReceivablesDatabase>,
  scope: ChargeScope,
  chargeId: string,
): Promise<{ id: string; state: ReceivableState } | null> {
  const query = db.selectFrom('receivables').select(['id', 'state']).where('provider_charge_id', '=', chargeId);
  return (await inScope(query, scope).executeTakeFirst()) ?? null;
}
