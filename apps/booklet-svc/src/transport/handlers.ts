import type { Kysely } from 'kysely';
import type { RegisterHandlers } from '@payments/bus';
import { QueueGroups, Subjects } from '@payments/contracts';
import type { BookletsDatabase } from '../db/schema';
import type { BookletDownloads } from '../domain/booklet-downloads';
import { requestBooklet } from '../domain/booklet-requests';
import type { InstallmentSource } from '../domain/ports';

export interface HandlerDeps {
  db: Kysely<BookletsDatabase>;
  source: InstallmentSource;
  /** Built PDFs, rebuilt when dropped past their retention. */
  downloads: BookletDownloads;
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
      const file = await deps.downloads.download(cmd.booklet_id);
      return { payment_slip_id: file.paymentSlipId, pdf_base64: file.pdf.toString('base64') };
    },
    { queue },
  );
  return [request, download];
};
