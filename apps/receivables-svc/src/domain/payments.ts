import type { Kysely } from 'kysely';
import type { Logger } from '@payments/logger';
import { ServiceError } from '@payments/contracts';
import { enqueue } from '@payments/outbox';
import type { ReceivablesDatabase } from '../db/schema';
import { callbackMessages, paidCallback } from './callback-messages';
import { formatLocalDateTime } from './local-datetime';
import type { ProviderPayment } from './ports';
import { recordTransition } from './state-history';

export type PaymentRecord = 'approved' | 'duplicate' | 'already_paid';

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
  timeZone: string,
  logger: Logger,
): Promise<PaymentRecord> {
  return db.transaction().execute(async (trx) => {
    const fresh = await trx
      .insertInto('provider_events')
      .values({ event_id: payment.eventId })
      .onConflict((oc) => oc.column('event_id').doNothing())
      .returning('event_id')
      .executeTakeFirst();
    if (!fresh) return 'duplicate';
    const row = await trx
      .selectFrom('receivables')
      .selectAll()
      .where('provider_charge_id', '=', payment.chargeId)
      .forUpdate()
      .executeTakeFirst();
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
