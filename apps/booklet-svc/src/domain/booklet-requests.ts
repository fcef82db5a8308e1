import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { messageIds, ServiceError, Streams } from '@payments/contracts';
import { enqueue } from '@payments/outbox';
import type { BookletsDatabase } from '../db/schema';
import { awaitsRegistration, bookletInstallments } from './booklet-contents';
import type { InstallmentSource } from './ports';

export interface AcceptedBooklet {
  bookletId: string;
  installmentCount: number;
  /** Payable installments the provider has not registered yet: the booklet waits for them. */
  waitingForRegistration: number;
}

/**
 * Queues a booklet for a payment slip id: 404 when the tenant has no pending or paid installment with
 * that id.
 * The request and its build job are written in one transaction.
 */
export async function requestBooklet(
  db: Kysely<BookletsDatabase>,
  source: InstallmentSource,
  tenantId: string,
  paymentSlipId: string,
  urlCallback: string,
): Promise<AcceptedBooklet> {
  const installments = bookletInstallments((await source.installments(tenantId, paymentSlipId)).installments);
  if (installments.length === 0)
    throw new ServiceError('not_found', `no pending or paid receivable has payment_slip_id ${paymentSlipId}`);
  const bookletId = randomUUID();
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('booklets')
      .values({
        id: bookletId,
        tenant_id: tenantId,
        payment_slip_id: paymentSlipId,
        url_callback: urlCallback,
        status: 'queued',
        installment_count: null,
        page_count: null,
        error: null,
        finished_at: null,
      })
      .execute();
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
    installmentCount: installments.length,
    waitingForRegistration: installments.filter(awaitsRegistration).length,
  };
}
