import {
  COBV_STATUS,
  DAYS_PAYABLE_AFTER_DUE,
  REFUND_STATUS,
  receivableIdOfTxid,
  standardSchemaNames,
  standardViolations,
  type CobvTerms,
  type CobvView,
} from '@payments/pix-api';
import type { BatchRegistrationOutcome, ChargeRequest, ProviderChargeState } from '../../../domain/ports';

/** Whether a charge id is a PIX charge's txid made by txidFor (not, say, Inter's codigoSolicitacao). */
export function isPixChargeId(chargeId: string): boolean {
  return receivableIdOfTxid(chargeId) !== null;
}

/** Our charge's terms as a cobv's (libs/pix-api maps them to the standard's fields and modalities). */
export function termsOf(request: ChargeRequest, txid: string, chave: string): CobvTerms {
  const payer = request.payer;
  const street = [payer.address, payer.number, payer.neighborhood]
    .map((part) => part?.trim() ?? '')
    .filter((part) => part !== '')
    .join(', ');
  return {
    txid,
    chave,
    dueDate: request.dueDate,
    amountCents: request.amountCents,
    payer: {
      taxId: payer.taxId,
      name: payer.name,
      ...(street ? { address: street } : {}),
      ...(payer.city ? { city: payer.city } : {}),
      ...(payer.state ? { state: payer.state } : {}),
      ...(payer.zipCode ? { zipCode: payer.zipCode } : {}),
      ...(payer.email ? { email: payer.email } : {}),
    },
    fineBp: request.fineBp,
    interestPerDayCents: request.interestPerDayCents,
    discount: request.discount,
    daysPayableAfterDue: DAYS_PAYABLE_AFTER_DUE,
  };
}

/** The body's violations of the standard's CobVSolicitada (none while the lib has no schemas generated yet). */
export function requestViolations(body: unknown): string[] {
  if (!standardSchemaNames().includes('CobVSolicitada')) return [];
  return standardViolations('CobVSolicitada', body).map((v) => `${v.path || '/'} ${v.message}`);
}

/** Removed at the bank, by the receiver or by its PSP: no longer payable. */
export function isRemoved(view: CobvView): boolean {
  return view.status === COBV_STATUS.removedByReceiver || view.status === COBV_STATUS.removedByPsp;
}

/**
 * What a cobv at the bank means for its registration: active or already paid is registered (the BR Code
 * is what the payer pays; a payment is applied by its notice or reconciliation); removed before it was
 * registered is rejected with its txid; without a BR Code yet it stays pending with its txid.
 */
export function registrationOutcome(view: CobvView): BatchRegistrationOutcome {
  if (isRemoved(view))
    return {
      kind: 'rejected',
      code: 'pix_not_open',
      message: `the PIX charge is ${view.status} at the bank`,
      chargeId: view.txid,
    };
  if (!view.pixCopiaECola)
    return { kind: 'unavailable', reason: `the bank gave no BR Code for ${view.txid} yet`, chargeId: view.txid };
  return {
    kind: 'registered',
    charge: {
      chargeId: view.txid,
      ourNumber: view.txid,
      // A PIX charge is no slip: no barcode, no typeable line, no PDF.
      barcode: '',
      typeableLine: '',
      pixCopyAndPaste: view.pixCopiaECola,
      // The QR code is drawn from the copy-and-paste by the gateway (a signed link made at registration).
      qrcodeImageUrl: '',
      pdfUrl: '',
    },
  };
}

/** A consulted cobv as the payment confirmation sees it: the amount and time paid are the bank's (its pix). */
export function chargeState(view: CobvView): ProviderChargeState {
  const [payment] = view.payments;
  if (payment)
    return {
      kind: 'paid',
      payment: {
        paidAt: payment.at,
        paidAtPrecision: 'time',
        amountPaidCents: payment.amountCents,
        // The PIX API reports no tariff; it is settled on the statement.
        feeCents: 0,
        method: 'pix',
      },
      // Devoluções of that payment, so a devolução told by a notice is confirmed by the consult.
      refunds: view.refunds
        .filter((refund) => refund.endToEndId === payment.endToEndId)
        .map((refund) => ({
          id: refund.id,
          amountCents: refund.amountCents,
          status: refund.status,
          at: refund.at ?? refund.requestedAt,
          inProcess: refund.status === REFUND_STATUS.processing,
        })),
    };
  if (isRemoved(view)) return { kind: 'cancelled' };
  // CONCLUIDA without its pix is not something to act on; ATIVA is open.
  return view.status === COBV_STATUS.active ? { kind: 'open' } : { kind: 'unknown' };
}
