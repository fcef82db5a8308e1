import type { Kysely } from 'kysely';
import type { Logger } from '@payments/logger';
import { ServiceError, type ReceivableState } from '@payments/contracts';
import { enqueue } from '@payments/outbox';
import type { ReceivablesDatabase } from '../db/schema';
import { callbackMessages, paidCallback } from './callback-messages';
import { formatLocalDateTime } from './local-datetime';
import type { ProviderPayment } from './ports';
import { recordTransition } from './state-history';

export type PaymentRecord = 'approved' | 'duplicate' | 'already_paid';

/**
 * Which charges a provider notice may name: those registered under one provider account (so of that
 * account's tenant), or the legacy ones, registered with the sandbox before accounts existed. A real
 * bank's charge ids are unique per account only, so a notice is never matched outside its scope.
 */
export type ChargeScope = { accountId: string; tenantId: string } | 'legacy';

/**
 * Applies a payment the provider reports: the receivable becomes approved with payment date, amount
 * paid, fee and payment type, and the paid callback is queued. Each provider event counts once.
 * A cancellation still queued stays queued: its job then answers the ERP's cancel with an error
 * callback (paid before it could be cancelled), so every accepted cancel gets its one result.
 * An unknown charge is an error, so the provider retries (our registration may not be committed yet).
 */
export async function recordPayment(
  db: Kysely<ReceivablesDatabase>,
  payment: ProviderPayment,
  scope: ChargeScope,
  timeZone: string,
  logger: Logger,
): Promise<PaymentRecord> {
  return db.transaction().execute(async (trx) => {
    const fresh = await trx
      .insertInto('provider_events')
      .values({ event_id: payment.eventId, provider_account_id: scope === 'legacy' ? null : scope.accountId })
      .onConflict((oc) => oc.column('event_id').doNothing())
      .returning('event_id')
      .executeTakeFirst();
    if (!fresh) return 'duplicate';
    let charge = trx
      .selectFrom('receivables')
      .selectAll()
      .where('provider_charge_id', '=', payment.chargeId)
      .forUpdate();
    charge =
      scope === 'legacy'
        ? charge.where('provider_account_id', 'is', null)
        : charge.where('provider_account_id', '=', scope.accountId).where('tenant_id', '=', scope.tenantId);
    const row = await charge.executeTakeFirst();
    if (!row) throw new ServiceError('not_found', `no receivable for provider charge ${payment.chargeId}`);
    if (row.state === 'approved') return 'already_paid';
    if (row.state !== 'pending')
      logger.warn(
        { receivableId: row.id, state: row.state },
        'payment received for a receivable that was not pending; recording it',
      );
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
    await recordTransition(trx, [after], row.state, 'approved', `paid by ${payment.method}`);
    await enqueue(trx, callbackMessages([paidCallback(after, formatLocalDateTime(payment.paidAt, timeZone))]));
    return 'approved';
  });
}

/** A charge of this scope, by the provider's id: enough to decide whether a notice needs the bank asked. */
export async function findCharge(
  db: Kysely<ReceivablesDatabase>,
  scope: ChargeScope,
  chargeId: string,
): Promise<{ id: string; state: ReceivableState } | null> {
  let query = db.selectFrom('receivables').select(['id', 'state']).where('provider_charge_id', '=', chargeId);
  query =
    scope === 'legacy'
      ? query.where('provider_account_id', 'is', null)
      : query.where('provider_account_id', '=', scope.accountId).where('tenant_id', '=', scope.tenantId);
  return (await query.executeTakeFirst()) ?? null;
}
