import type { BookletFailedCallback, BookletSentCallback } from '@payments/contracts';
import type { ReceivableCallback } from './receivable-callbacks';
import type { CallbackReceiver } from './receiver';

/** A booklet callback (libs/contracts): what the ERP hears when a carnê is built, or cannot be. */
export type BookletCallback = BookletSentCallback | BookletFailedCallback;

/** Any callback body an ERP receives: a receivable's or a booklet's. */
export type ErpCallback = ReceivableCallback | BookletCallback;

/** The callbacks a receiver got, parsed, in arrival order. */
export function receivedCallbacks(receiver: CallbackReceiver): ErpCallback[] {
  return receiver.received.map((r) => JSON.parse(r.body) as ErpCallback);
}

export const isReceivableCallback = (c: ErpCallback): c is ReceivableCallback => 'accounts_receivable_id' in c;

export const isBookletSent = (c: ErpCallback): c is BookletSentCallback =>
  'payment_slip_id' in c && c.type === 'sent' && c.success;

/** The sent callback of a booklet, if the receiver has got it. */
export function bookletSent(receiver: CallbackReceiver, paymentSlipId: string): BookletSentCallback | undefined {
  return receivedCallbacks(receiver)
    .filter(isBookletSent)
    .find((c) => c.payment_slip_id === paymentSlipId);
}
