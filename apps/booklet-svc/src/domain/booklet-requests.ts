import type { Kysely } from 'kysely';
import { messageIds, ServiceError, Streams } from '@payments/contracts';
import { enqueue } from '@payments/outbox';
import type { BookletsDatabase } from '../db/schema';
import { bookletIdFor } from './booklet-identity';
import { awaitsRegistration, bookletInstallments } from './booklet-contents';
import type { InstallmentSource } from './ports';

export interface AcceptedBooklet {
  bookletId: string;
  /** The payment slip id as the ERP spelled it on its charges (whatever spelling was asked). */
  paymentSlipId: string;
  installmentCount: number;
  /** Payable installments the provider has not registered yet: the booklet waits for them. */
  waitingForRegistration: number;
}

/**
 * Queues a booklet for a payment slip id: 404 when the tenant has no pending or paid installment with
 * that id. The request and its build job are written in one transaction. The booklet's id comes from
 * the request's Idempotency-Key (see bookletIdFor): a retry of a request whose booklet is stored
 * already finds it, and queues nothing more (one booklet, one callback).
 */
export async function requestBooklet(
  db: Kysely<BookletsDatabase>,
  source: InstallmentSource,
  tenantId: string,
  paymentSlipId: string,
  urlCallback: string,
  idempotencyKey?: string,
): Promise<AcceptedBooklet> {
  const reply = await source.installments(tenantId, paymentSlipId);
  const installments = bookletInstallments(reply.installments);
  const asSent = reply.payment_slip_id ?? paymentSlipId; // absent from an older receivables-svc
  if (installments.length === 0)
    throw new ServiceError('not_found', `no pending or paid receivable has payment_slip_id ${paymentSlipId}`);
  const bookletId = bookletIdFor(tenantId, paymentSlipId, idempotencyKey);
  await db.transaction().execute(async (trx) => {
    const stored = await trx
      .insertInto('booklets')
      .values({
        id: bookletId,
        tenant_id: tenantId,
        payment_slip_id: paymentSlipId,
        payment_slip_id_as_sent: asSent,
        url_callback: urlCallback,
        status: 'queued',
        installment_count: null,
        page_count: null,
        error: null,
        finished_at: null,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!stored) return; // the same request, retried: its booklet and build job exist already
    await enqueue(trx, [
      {
        stream: Streams.bookletBuilds,
        msgId: messageIds.bookletBuild(bookletId),
        payload: { tenant_id: tenantId, booklet_id: bookletId },
      },
    ]);
  });
  return {
    bookletId,
    paymentSlipId: asSent,
    installmentCount: installments.length,
    waitingForRegistration: installments.filter(awaitsRegistration).length,
  };
}
