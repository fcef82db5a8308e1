import type { Kysely, SelectQueryBuilder } from 'kysely';
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
    const row = await inScope(
      trx.selectFrom('receivables').selectAll().where('provider_charge_id', '=', payment.chargeId),
      scope,
    )
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

/** A charge of this scope, by the provider's id: enough to decide whether a notice needs the bank asked. */
export async function findCharge(
  db: Kysely<ReceivablesDatabase>,
  scope: ChargeScope,
  chargeId: string,
): Promise<{ id: string; state: ReceivableState } | null> {
  const query = db.selectFrom('receivables').select(['id', 'state']).where('provider_charge_id', '=', chargeId);
  return (await inScope(query, scope).executeTakeFirst()) ?? null;
}
