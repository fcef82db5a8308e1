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

/** An EMV field: its id, its length in two digits, its value (ASCII, so characters are bytes). */
function tlv(id: string, value: string): string {
  if (value.length > 99) throw new RangeError(`BR Code field ${id} longer than 99 characters`);
  return `${id}${String(value.length).padStart(2, '0')}${value}`;
}

/** CRC16-CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), as field 63 of a BR Code asks: 4 hex digits upper case. */
export function crc16CcittFalse(text: string): string {
  let crc = 0xffff;
  for (let i = 0; i < text.length; i++) {
    crc ^= text.charCodeAt(i) << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/**
 * The dynamic BR Code of a charge served at a location (a cobv), as the BR Code manual asks for dynamic
 * codes: point of initiation 12 (paid once), merchant account 26 with GUI br.gov.bcb.pix and the
 * location URL in subfield 25 (no key: the payer's app reads it from the payload), category 0000,
 * currency 986, no amount (a cobv's amount depends on the day it is paid and comes from the payload),
 * country BR, name 59, city 60, txid '***' in 62-05 (the payload names the txid), CRC in 63.
 */
export function buildDynamicBrCode(receiver: Omit<PixReceiver, 'key'>, locationUrl: string): string {
  if (/^https?:\/\//i.test(locationUrl)) throw new RangeError('the location goes without its scheme');
  if (locationUrl.length === 0 || locationUrl.length > 77 || /[^\x21-\x7e]/.test(locationUrl))
    throw new RangeError(`location must be 1 to 77 printable ASCII characters, got "${locationUrl}"`);
  for (const [name, value, max] of [
    ['merchant name', receiver.merchantName, MAX_MERCHANT_NAME],
    ['merchant city', receiver.merchantCity, MAX_MERCHANT_CITY],
  ] as const) {
    if (value !== toMerchantText(value) || value.length === 0 || value.length > max)
      throw new RangeError(`${name} must be 1 to ${max} uppercase ASCII characters, got "${value}"`);
  }
  const body = [
    tlv('00', '01'),
    tlv('01', '12'),
    tlv('26', tlv('00', 'br.gov.bcb.pix') + tlv('25', locationUrl)),
    tlv('52', '0000'),
    tlv('53', '986'),
    tlv('58', 'BR'),
    tlv('59', receiver.merchantName),
    tlv('60', receiver.merchantCity),
    tlv('62', tlv('05', '***')),
  ].join('');
  const withCrcField = `${body}6304`;
  return withCrcField + crc16CcittFalse(withCrcField);
}
