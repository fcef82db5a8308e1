import { generatePixPayload } from '@brazilian-utils/brazilian-utils';
import { fromCents } from '@payments/br-format';

/**
 * The PIX BR Code (EMV QRCPS-MPM "copia e cola") of a charge. @brazilian-utils (also our CPF/CNPJ
 * library) assembles it as the BCB manual asks (payload format 01, merchant account 26 with GUI
 * br.gov.bcb.pix and the key, merchant category 0000, currency 986, amount 54, country BR, name 59,
 * city 60, txid in 62-05, CRC16-CCITT-FALSE in 63; static: no point-of-initiation field) and reproduces
 * the vector in test-vectors/pix.json; this module fixes what we feed it.
 */
export interface PixReceiver {
  /** The receiving PIX key (the sandbox uses a random-key EVP uuid). */
  key: string;
  /** Uppercase ASCII, at most 25 characters. */
  merchantName: string;
  /** Uppercase ASCII, at most 15 characters. */
  merchantCity: string;
}

export const MAX_MERCHANT_NAME = 25;
export const MAX_MERCHANT_CITY = 15;

/** The txid of a charge: letters and digits only, at most 25 (BCB rule for field 62-05). */
export function txidForOurNumber(ourNumber: string): string {
  if (!/^\d{1,22}$/.test(ourNumber)) throw new RangeError(`our_number must be digits, got "${ourNumber}"`);
  return `SBX${ourNumber}`;
}

export function buildBrCode(receiver: PixReceiver, amountCents: number, txid: string): string {
  if (!/^[A-Za-z0-9]{1,25}$/.test(txid)) throw new RangeError(`txid must be 1 to 25 letters or digits, got "${txid}"`);
  if (!Number.isSafeInteger(amountCents) || amountCents <= 0)
    throw new RangeError(`amount must be positive cents, got ${amountCents}`);
  for (const [name, value, max] of [
    ['merchant name', receiver.merchantName, MAX_MERCHANT_NAME],
    ['merchant city', receiver.merchantCity, MAX_MERCHANT_CITY],
  ] as const) {
    if (value !== toMerchantText(value) || value.length === 0 || value.length > max) {
      throw new RangeError(`${name} must be 1 to ${max} uppercase ASCII characters, got "${value}"`);
    }
  }
  const brCode = generatePixPayload({
    key: receiver.key,
    merchantName: receiver.merchantName,
    merchantCity: receiver.merchantCity,
    // An integer number of cents over 100 is the double nearest to that decimal: toFixed(2) prints it back.
    amount: fromCents(amountCents),
    txid,
  });
  // null: a key that is not a PIX key (the rest is checked above), or an amount over 13 characters.
  if (brCode === null)
    throw new RangeError(`BR Code not built: invalid PIX key "${receiver.key}" or amount ${amountCents}`);
  return brCode;
}

/**
 * Text as BR Code name and city fields want it: accents dropped, uppercase, printable ASCII only
 * (lengths are counted in characters, so anything outside ASCII would break the TLV lengths).
 */
export function toMerchantText(value: string): string {
  return value
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toUpperCase()
    .replace(/[^\x20-\x7e]/g, '')
    .trim();
}
