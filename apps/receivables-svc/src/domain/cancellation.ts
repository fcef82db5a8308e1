import type { Kysely } from 'kysely';
import type { Logger } from '@payments/logger';
import { messageIds, ServiceError, Streams, type CancellationJob, type JobOutcome } from '@payments/contracts';
import { enqueue } from '@payments/outbox';
import type { ReceivableRow, ReceivablesDatabase } from '../db/schema';
import { callbackMessages, cancellationFailedCallback, cancelledCallback } from './callback-messages';
import { backoff } from './job-outcome';
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
}

/** What the provider is told (the adapter maps it to the bank's own reason codes). */
export const CancellationReasons = { requested: 'requested by the ERP', cleanup: 'cleanup' } as const;

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

/** Carries out a queued cancellation: at the provider when the charge is registered there, then the callback. */
export async function processCancellation(
  deps: CancellationDeps,
  job: CancellationJob,
  deliveryCount: number,
): Promise<JobOutcome> {
  const row = await deps.db
    .selectFrom('receivables')
    .selectAll()
    .where('id', '=', job.receivable_id)
    .where('tenant_id', '=', job.tenant_id)
    .executeTakeFirst();
  if (!row) return 'done';
  if (job.reason === 'cleanup') return cleanUp(deps, row, deliveryCount);
  if (row.cancel_requested_at === null) return 'done'; // already carried out

  let outcome: CancellationOutcome = 'cancelled';
  if (row.state === 'pending' && row.registration_status === 'registered' && row.provider_charge_id) {
    try {
      outcome = await cancelAtProvider(deps, row, row.provider_charge_id, CancellationReasons.requested);
    } catch (err) {
      if (err instanceof ProviderUnavailableError) return backoff(deliveryCount);
      throw err;
    }
  }
  await deps.db.transaction().execute(async (trx) => {
    const current = await trx
      .selectFrom('receivables')
      .selectAll()
      .where('id', '=', row.id)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (current.cancel_requested_at === null) return;
    const cleared = { cancel_requested_at: null, updated_at: new Date() };
    if (current.state !== 'pending' || outcome !== 'cancelled') {
      // Paid (or rejected) while the cancellation waited, or the provider refuses: it stays as it is.
      const after = await trx
        .updateTable('receivables')
        .set(cleared)
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const reason =
        current.state === 'approved' || outcome === 'not_open'
          ? 'the receivable was paid before it could be cancelled'
          : current.state === 'pending' && outcome === 'refused'
            ? 'the provider refused to cancel the charge; it stays open'
            : (REFUSALS[current.state] ?? 'the receivable can no longer be cancelled');
      await enqueue(trx, callbackMessages([cancellationFailedCallback(after, reason)]));
      return;
    }
    const after = await trx
      .updateTable('receivables')
      .set({ ...cleared, state: 'cancelled' })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordTransition(
      trx,
      [after],
      'pending',
      'cancelled',
      current.registration_status === 'registered' ? 'cancelled at the provider' : 'cancelled before registration',
    );
    await enqueue(trx, callbackMessages([cancelledCallback(after)]));
  });
  return 'done';
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
