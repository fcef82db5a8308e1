import type { Kysely } from 'kysely';
import type { RegisterHandlers } from '@payments/bus';
import { QueueGroups, ServiceError, Subjects } from '@payments/contracts';
import type { BookletsDatabase } from '../db/schema';
import { requestBooklet } from '../domain/booklet-requests';
import type { InstallmentSource, PdfStore } from '../domain/ports';

export interface HandlerDeps {
  db: Kysely<BookletsDatabase>;
  source: InstallmentSource;
  store: PdfStore;
  /** Wakes the outbox relay after a commit that queued work. */
  onEnqueued: () => void;
}

/** Requests from the gateway: queue a booklet; hand over a built PDF (the gateway checked the link). */
export const registerHandlers: RegisterHandlers<HandlerDeps> = (bus, deps) => {
  const queue = QueueGroups.booklets;
  const request = bus.serve(
    Subjects.booklets.request,
    async (cmd) => {
      const accepted = await requestBooklet(
        deps.db,
        deps.source,
        cmd.tenant_id,
        cmd.payment_slip_id,
        cmd.url_callback,
        cmd.idempotency_key,
      );
      deps.onEnqueued();
      const waiting =
        accepted.waitingForRegistration > 0
          ? ` ${accepted.waitingForRegistration} of them are still being registered with the provider: the booklet is built once they are.`
          : '';
      return {
        success: true,
        type: 'preparing',
        message: `the booklet of ${accepted.installmentCount} installment(s) is being prepared; the download link follows by callback.${waiting}`,
        payment_slip_id: accepted.paymentSlipId,
      };
    },
    { queue },
  );

  const download = bus.serve(
    Subjects.booklets.download,
    async (cmd) => {
      const booklet = await deps.db
        .selectFrom('booklets')
        .select(['payment_slip_id_as_sent', 'status'])
        .where('id', '=', cmd.booklet_id)
        .executeTakeFirst();
      const pdf = booklet?.status === 'ready' ? await deps.store.get(cmd.booklet_id) : undefined;
      if (!booklet || !pdf) throw new ServiceError('not_found', 'no such booklet');
      return { payment_slip_id: booklet.payment_slip_id_as_sent, pdf_base64: pdf.toString('base64') };
    },
    { queue },
  );
  return [request, download];
};
