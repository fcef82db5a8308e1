import type { Kysely } from 'kysely';
import type { RegisterHandlers } from '@payments/bus';
import { QueueGroups, Subjects } from '@payments/contracts';
import type { ReceivablesDatabase } from '../db/schema';
import { requestCancellation } from '../domain/cancellation';
import { receivableHistory } from '../domain/history';
import { listInstallments } from '../domain/installments';
import { receivablePaymentData } from '../domain/payment-data';
import { receivableDetail } from '../domain/receivable-detail';
import type { ClientDirectory, PaymentProviders, ProviderAccounts } from '../domain/ports';
import { registrationStats } from '../domain/registration-stats';
import { registrationHealth } from '../domain/registration-waits';
import { consultReceivable, searchReceivables } from '../domain/search';
import { fetchSlipPdf } from '../domain/slip-pdf';
import { slipQrCodePng } from '../domain/slip-qrcode';
import { CoalescedIntake } from './coalesced-intake';

export interface HandlerDeps {
  db: Kysely<ReceivablesDatabase>;
  clients: ClientDirectory;
  providers: PaymentProviders;
  accounts: ProviderAccounts;
  timeZone: string;
  /** Wakes the outbox relay after a commit that queued work. */
  onEnqueued: () => void;
}

/** Requests from the gateway (slip PDFs and QR codes, histories, payment data and statistics included), and booklet-svc's question for a booklet's installments. */
export const registerHandlers: RegisterHandlers<HandlerDeps> = (bus, deps) => {
  const queue = QueueGroups.receivables;
  // Concurrent creates, of any tenants, share transactions: one commit serves many single-charge POSTs.
  const intake = new CoalescedIntake(deps.db, deps.clients);
  const create = bus.serve(
    Subjects.receivables.create,
    async (cmd) => {
      const result = await intake.accept({
        tenantId: cmd.tenant_id,
        account: cmd.provider_account,
        items: cmd.receivables,
      });
      deps.onEnqueued();
      const existing =
        result.alreadyExisting > 0 ? `; ${result.alreadyExisting} already existed and were left as they are` : '';
      return {
        status: 'success',
        message: `${result.created} receivable(s) received and being processed: registration with the provider is under way${existing}`,
        existing: result.existing,
      };
    },
    { queue },
  );

  const cancel = bus.serve(
    Subjects.receivables.cancel,
    async (cmd) => {
      await requestCancellation(deps.db, cmd.tenant_id, cmd.account_receivable_id);
      deps.onEnqueued();
      return { status: 'success', message: 'the receivable was sent for cancellation; the result follows by callback' };
    },
    { queue },
  );

  const search = bus.serve(
    Subjects.receivables.search,
    async (cmd) => {
      const page = await searchReceivables(deps.db, cmd.tenant_id, cmd.query, cmd.limit, cmd.cursor, deps.timeZone);
      return { items: page.items, next_cursor: page.nextCursor, filters_applied: true };
    },
    { queue },
  );

  const installments = bus.serve(
    Subjects.receivables.installments,
    (cmd) => listInstallments(deps.db, cmd.tenant_id, cmd.payment_slip_id),
    { queue },
  );

  const slipPdf = bus.serve(
    Subjects.receivables.slipPdf,
    async (cmd) => ({ pdf_base64: (await fetchSlipPdf(deps, cmd.receivable_id)).toString('base64') }),
    { queue },
  );

  const slipQrCode = bus.serve(
    Subjects.receivables.slipQrCode,
    async (cmd) => ({ png_base64: (await slipQrCodePng(deps.db, cmd.receivable_id)).toString('base64') }),
    { queue },
  );

  const consult = bus.serve(
    Subjects.receivables.consult,
    (cmd) => consultReceivable(deps.db, cmd.tenant_id, cmd.account_receivable_id, deps.timeZone),
    { queue },
  );

  const history = bus.serve(
    Subjects.receivables.history,
    (cmd) => receivableHistory(deps.db, cmd.tenant_id, cmd.account_receivable_id),
    { queue },
  );

  // The payment data its registered callback carried, for an ERP that missed the callback.
  const paymentData = bus.serve(
    Subjects.receivables.paymentData,
    (cmd) => receivablePaymentData(deps.db, cmd.tenant_id, cmd.account_receivable_id),
    { queue },
  );

  // The charge as issued (due date, amount, payer and tax id), for the ERP's support people.
  const detail = bus.serve(
    Subjects.receivables.detail,
    (cmd) => receivableDetail(deps.db, cmd.tenant_id, cmd.account_receivable_id),
    { queue },
  );

  // The admin API's registration statistics, from the per-minute aggregates.
  const stats = bus.serve(Subjects.receivables.registrationStats, (cmd) => registrationStats(deps.db, cmd), { queue });
  // The charges waiting for their bank, per bank account, from the queued rows.
  const waiting = bus.serve(Subjects.receivables.registrationHealth, () => registrationHealth(deps.db), { queue });
  return [
    create,
    cancel,
    search,
    installments,
    consult,
    slipPdf,
    slipQrCode,
    history,
    paymentData,
    detail,
    stats,
    waiting,
  ];
};
