import { buildBarcode, typeableLineFromBarcode } from './barcode';
import { buildBrCode, txidForOurNumber, type PixReceiver } from './br-code';
import type { ChargeTerms, PaymentData } from './charge';
import { buildFreeField } from './free-field';

/** The payee's account at the sandbox bank: what goes into every barcode and BR Code it issues. */
export interface PayeeAccount {
  bankCode: string;
  agency: string;
  wallet: string;
  account: string;
  pix: PixReceiver;
}

export const OUR_NUMBER_DIGITS = 11;

/** our_number as the bank prints it: the sequence value zero-padded to 11 digits. */
export function formatOurNumber(sequenceValue: number): string {
  const text = String(sequenceValue);
  if (!Number.isSafeInteger(sequenceValue) || sequenceValue < 1 || text.length > OUR_NUMBER_DIGITS) {
    throw new RangeError(`our_number sequence out of range: ${sequenceValue}`);
  }
  return text.padStart(OUR_NUMBER_DIGITS, '0');
}

/** Barcode, typeable line (hybrid slips) and BR Code (every charge) for a charge numbered ourNumber. */
export function issuePaymentData(
  account: PayeeAccount,
  ourNumber: string,
  terms: Pick<ChargeTerms, 'kind' | 'amountCents' | 'dueDate'>,
): PaymentData {
  const pixCopyAndPaste = buildBrCode(account.pix, terms.amountCents, txidForOurNumber(ourNumber));
  if (terms.kind === 'pix') return { ourNumber, barcode: null, typeableLine: null, pixCopyAndPaste };
  const freeField = buildFreeField({
    agency: account.agency,
    wallet: account.wallet,
    ourNumber,
    account: account.account,
  });
  const barcode = buildBarcode({
    bankCode: account.bankCode,
    amountCents: terms.amountCents,
    dueDate: terms.dueDate,
    freeField,
  });
  return { ourNumber, barcode, typeableLine: typeableLineFromBarcode(barcode), pixCopyAndPaste };
}
