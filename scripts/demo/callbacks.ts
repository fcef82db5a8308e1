/** Payment data of a registered callback. */
export interface PaymentData {
  typeable_line: string;
  barcode: string;
  our_number: string;
  pix_copy_and_paste: string;
  qrcode_image: string;
  pdf: string;
}

/**
 * Every callback body the service sends (the interface spec and docs/api.md, Callbacks): registered (success true or false),
 * paid, cancellation result (status), booklet sent. Fields absent from a kind are undefined.
 */
export interface CallbackBody {
  success?: boolean;
  type?: 'registered' | 'paid' | 'sent';
  status?: 'success' | 'error';
  accounts_receivable_id?: string;
  payment_slip_id?: string;
  payment_data?: PaymentData;
  error?: { code: string; message: string };
  message?: string;
  download?: string;
  payment_date?: string;
  amount_paid?: number;
  fee_amount?: number;
  payment_type?: string;
}

/** A callback as the receiver took it: signature checked, duplicates (same webhook-id) dropped. */
export interface ReceivedCallback {
  eventId: string;
  body: CallbackBody;
  receivedAt: number;
}

export function isRegistration(body: CallbackBody, receivableId: string): boolean {
  return body.type === 'registered' && body.accounts_receivable_id === receivableId;
}

export function isPayment(body: CallbackBody, receivableId: string): boolean {
  return body.type === 'paid' && body.accounts_receivable_id === receivableId;
}

export function isCancellation(body: CallbackBody, receivableId: string): boolean {
  return body.status !== undefined && body.type === undefined && body.accounts_receivable_id === receivableId;
}

export function isBooklet(body: CallbackBody, paymentSlipId: string): boolean {
  return body.type === 'sent' && body.payment_slip_id === paymentSlipId;
}
