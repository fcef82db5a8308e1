import { bankSlipModulo11, modulo10 } from './check-digits';
import { dueDateFactor } from './due-factor';

/**
 * The 44-digit FEBRABAN bank slip barcode and the 47-digit typeable line (linha digitável) made from it.
 *
 *   barcode  1-3 bank | 4 currency (9 = real) | 5 general check digit | 6-9 due-date factor
 *            | 10-19 value in cents | 20-44 free field (the bank's own, see free-field.ts)
 */
export const CURRENCY_REAL = '9';
/** The value field holds 10 digits: R$ 99,999,999.99. */
const MAX_VALUE_WITH_FACTOR = 9_999_999_999;
/** Above that, FEBRABAN lets the value take the factor's 4 digits too (14 digits, no due-date factor). */
const MAX_VALUE_WITHOUT_FACTOR = 99_999_999_999_999;

export interface BarcodeInput {
  /** 3-digit bank code (COMPE). */
  bankCode: string;
  amountCents: number;
  dueDate: string;
  /** 25 digits. */
  freeField: string;
}

export function buildBarcode(input: BarcodeInput): string {
  const { bankCode, amountCents, dueDate, freeField } = input;
  if (!/^\d{3}$/.test(bankCode)) throw new RangeError(`bank code must be 3 digits, got "${bankCode}"`);
  if (!/^\d{25}$/.test(freeField)) throw new RangeError(`free field must be 25 digits, got "${freeField}"`);
  if (!Number.isSafeInteger(amountCents) || amountCents < 0 || amountCents > MAX_VALUE_WITHOUT_FACTOR) {
    throw new RangeError(`amount in cents out of the barcode's range: ${amountCents}`);
  }
  const factorAndValue =
    amountCents > MAX_VALUE_WITH_FACTOR
      ? String(amountCents).padStart(14, '0')
      : dueDateFactor(dueDate) + String(amountCents).padStart(10, '0');
  const withoutCheckDigit = bankCode + CURRENCY_REAL + factorAndValue + freeField;
  const checkDigit = bankSlipModulo11(withoutCheckDigit);
  return withoutCheckDigit.slice(0, 4) + String(checkDigit) + withoutCheckDigit.slice(4);
}

/**
 * The typeable line of a barcode:
 *   field 1: bank, currency, free field 1-5, modulo-10 digit        (10)
 *   field 2: free field 6-15, modulo-10 digit                       (11)
 *   field 3: free field 16-25, modulo-10 digit                      (11)
 *   field 4: the barcode's general check digit                      (1)
 *   field 5: due-date factor and value                              (14)
 */
export function typeableLineFromBarcode(barcode: string): string {
  if (!/^\d{44}$/.test(barcode)) throw new RangeError(`a barcode has 44 digits, got "${barcode}"`);
  const freeField = barcode.slice(19);
  const field1 = barcode.slice(0, 4) + freeField.slice(0, 5);
  const field2 = freeField.slice(5, 15);
  const field3 = freeField.slice(15, 25);
  return [
    field1 + modulo10(field1),
    field2 + modulo10(field2),
    field3 + modulo10(field3),
    barcode[4],
    barcode.slice(5, 19),
  ].join('');
}
