import {
  batchCallbackRequests,
  PaymentTypeLabels,
  Streams,
  type CallbackEventType,
  type CallbackRequest,
  type CancellationCallback,
  type CancellationFailedCallback,
  type PaidCallback,
  type PaymentData,
  type RegisteredCallback,
  type RegistrationFailedCallback,
} from '@payments/contracts';
import type { OutboxMessage } from '@payments/outbox';
import type { ReceivableRow } from '../db/schema';
import { fromCents } from '@payments/br-format';

/** Outbox messages for callback-svc carrying these callback requests, in batches. */
export function callbackMessages(requests: CallbackRequest[]): OutboxMessage[] {
  return batchCallbackRequests(requests).map(({ msgId, batch }) => ({
    stream: Streams.callbackRequests,
    msgId,
    payload: batch,
  }));
}

/**
 * The callbacks a receivable causes; they name it as the ERP spelled it at creation. Event ids are derived from the receivable (and the cancellation
 * request number), so a callback requested twice is one event.
 */
function callback(
  row: Pick<ReceivableRow, 'id' | 'tenant_id' | 'url_callback'>,
  kind: string,
  eventType: CallbackEventType,
  payload: CallbackRequest['payload'],
): CallbackRequest {
  return {
    event_id: `evt_${kind}_${row.id.replace(/-/g, '')}`,
    tenant_id: row.tenant_id,
    event_type: eventType,
    url: row.url_callback,
    payload,
  };
}

/** What a registered callback is made of. */
export type RegisteredRow = Pick<
  ReceivableRow,
  | 'id'
  | 'tenant_id'
  | 'url_callback'
  | 'account_receivable_id_as_sent'
  | 'typeable_line'
  | 'barcode'
  | 'our_number'
  | 'pix_copy_and_paste'
  | 'qrcode_image_url'
  | 'pdf_url'
>;

/** The columns a registered charge's payment data is read from. */
export type PaymentDataRow = Pick<
  ReceivableRow,
  'typeable_line' | 'barcode' | 'our_number' | 'pix_copy_and_paste' | 'qrcode_image_url' | 'pdf_url'
>;

/**
 * The payment data of a registered charge, as its registered callback carries it and as
 * GET .../{uuid}/payment-data answers it (docs/api.md): one mapping, so the two cannot differ.
 */
export function paymentDataOf(row: PaymentDataRow): PaymentData {
  return {
    typeable_line: row.typeable_line ?? '',
    barcode: row.barcode ?? '',
    our_number: row.our_number ?? '',
    pix_copy_and_paste: row.pix_copy_and_paste ?? '',
    qrcode_image: row.qrcode_image_url ?? '',
    pdf: row.pdf_url ?? '',
  };
}

export function registeredCallback(row: RegisteredRow): CallbackRequest {
  const payload: RegisteredCallback = {
    success: true,
    type: 'registered',
    accounts_receivable_id: row.account_receivable_id_as_sent,
    payment_data: paymentDataOf(row),
  };
  return callback(row, 'registered', 'receivable.registered', payload);
}

export function registrationFailedCallback(row: ReceivableRow, code: string, message: string): CallbackRequest {
  const payload: RegistrationFailedCallback = {
    success: false,
    type: 'registered',
    accounts_receivable_id: row.account_receivable_id_as_sent,
    error: { code, message },
  };
  return callback(row, 'registered', 'receivable.registration_failed', payload);
}

export function cancelledCallback(row: ReceivableRow): CallbackRequest {
  const payload: CancellationCallback = {
    status: 'success',
    accounts_receivable_id: row.account_receivable_id_as_sent,
    message: 'the receivable was cancelled',
  };
  return callback(row, `cancel${row.cancellation_requests}`, 'receivable.cancelled', payload);
}

/**
 * The bank cancelled the charge or let it expire: one receivable.cancelled callback saying so.
 * With an ERP cancel in flight it is that request's one answer (the event id its job would have used);
 * otherwise an event of its own, apart from any earlier cancellation's answer.
 */
export function bankCancelledCallback(row: ReceivableRow, message: string, answersRequest: boolean): CallbackRequest {
  const payload: CancellationCallback = {
    status: 'success',
    accounts_receivable_id: row.account_receivable_id_as_sent,
    message,
  };
  const kind = answersRequest ? `cancel${row.cancellation_requests}` : 'bankcancel';
  return callback(row, kind, 'receivable.cancelled', payload);
}

export function cancellationFailedCallback(row: ReceivableRow, message: string): CallbackRequest {
  const payload: CancellationFailedCallback = {
    status: 'error',
    accounts_receivable_id: row.account_receivable_id_as_sent,
    message,
  };
  return callback(row, `cancel${row.cancellation_requests}`, 'receivable.cancellation_failed', payload);
}

export function paidCallback(row: ReceivableRow, paymentDate: string): CallbackRequest {
  const payload: PaidCallback = {
    success: true,
    type: 'paid',
    accounts_receivable_id: row.account_receivable_id_as_sent,
    payment_date: paymentDate,
    amount_paid: fromCents(row.amount_paid_cents ?? 0),
    fee_amount: fromCents(row.fee_cents ?? 0),
    payment_type: PaymentTypeLabels[row.payment_type],
  };
  return callback(row, 'paid', 'receivable.paid', payload);
}
