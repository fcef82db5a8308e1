/**
 * Independent checks of the payment data a provider hands back, written from the FEBRABAN and BCB
 * rules (not from the bank sandbox's code), so end-to-end tests can tell whether a real bank app would
 * accept what our system relays: the 44-digit slip barcode, its 47-digit typeable line, the PIX BR Code
 * and the QR-code image. Each *Problems function returns human-readable problems; [] means valid.
 */
import jsQR from 'jsqr';
import { PNG } from 'pngjs';

/* ------------------------------------------------------------------------------------------------ */
/* Bank slip barcode (FEBRABAN "boleto de cobrança bancária", 44 digits)                            */
/* ------------------------------------------------------------------------------------------------ */

export interface BarcodeFields {
  bankCode: string;
  currency: string;
  checkDigit: string;
  /** Due-date factor (positions 6-9). */
  dueFactor: string;
  /** Value in cents (positions 10-19). */
  valueCents: number;
  /** The bank's 25-digit free field (positions 20-44). */
  freeField: string;
}

export function parseBarcode(barcode: string): BarcodeFields {
  if (!/^\d{44}$/.test(barcode)) throw new Error(`a slip barcode has 44 digits, got "${barcode}"`);
  return {
    bankCode: barcode.slice(0, 3),
    currency: barcode[3],
    checkDigit: barcode[4],
    dueFactor: barcode.slice(5, 9),
    valueCents: Number(barcode.slice(9, 19)),
    freeField: barcode.slice(19),
  };
}

/**
 * Problems of a slip barcode: length, currency code 9 (real), and the general check digit (modulo 11
 * of the other 43 digits, weights 2..9 from the right, 11 - remainder, where 0, 10 and 11 become 1).
 * With `expected`, also that it encodes that value and due date.
 */
export function barcodeProblems(barcode: string, expected: { amountCents?: number; dueDate?: string } = {}): string[] {
  if (!/^\d+$/.test(barcode)) return [`barcode must contain only digits, got "${barcode}"`];
  if (barcode.length !== 44) return [`barcode must have 44 digits, has ${barcode.length}`];
  const problems: string[] = [];
  const fields = parseBarcode(barcode);
  if (fields.currency !== '9') problems.push(`currency code (position 4) must be 9 (real), is ${fields.currency}`);
  const expectedDigit = bankSlipGeneralDigit(barcode.slice(0, 4) + barcode.slice(5));
  if (Number(fields.checkDigit) !== expectedDigit) {
    problems.push(`general check digit (position 5) is ${fields.checkDigit}, modulo 11 gives ${expectedDigit}`);
  }
  if (expected.amountCents !== undefined && fields.valueCents !== expected.amountCents) {
    problems.push(`value field is ${fields.valueCents} cents, expected ${expected.amountCents}`);
  }
  if (expected.dueDate !== undefined) {
    const factor = dueFactorOf(expected.dueDate);
    if (fields.dueFactor !== factor)
      problems.push(`due-date factor is ${fields.dueFactor}, ${expected.dueDate} gives ${factor}`);
  }
  return problems;
}

/**
 * Due-date factor: days since 1997-10-07; from 2025-02-22 (the day after factor 9999) it restarts at
 * 1000 and cycles through 1000..9999 (FEBRABAN's 2025 rule).
 */
export function dueFactorOf(date: string): string {
  const day = (text: string) =>
    Date.UTC(Number(text.slice(0, 4)), Number(text.slice(5, 7)) - 1, Number(text.slice(8, 10))) / 86_400_000;
  const days = day(date) - day('1997-10-07');
  const sinceReset = day(date) - day('2025-02-22');
  const factor = sinceReset < 0 ? days : 1000 + (sinceReset % 9000);
  return String(factor).padStart(4, '0');
}

function bankSlipGeneralDigit(digits43: string): number {
  const weights = [2, 3, 4, 5, 6, 7, 8, 9];
  const sum = [...digits43].reverse().reduce((acc, d, i) => acc + Number(d) * weights[i % weights.length], 0);
  const digit = 11 - (sum % 11);
  return digit >= 10 || digit === 0 ? 1 : digit;
}

/* ------------------------------------------------------------------------------------------------ */
/* Typeable line (linha digitável, 47 digits)                                                       */
/* ------------------------------------------------------------------------------------------------ */

/**
 * Problems of a typeable line given the barcode it should encode: 47 digits, the three modulo-10
 * field check digits (positions 10, 21 and 32), and that reassembling it gives the same barcode.
 * Punctuation and spaces (as printed) are ignored.
 */
export function typeableLineProblems(line: string, barcode: string): string[] {
  const digits = line.replace(/[\s.]/g, '');
  if (!/^\d+$/.test(digits)) return [`typeable line must contain only digits, got "${line}"`];
  if (digits.length !== 47) return [`typeable line must have 47 digits, has ${digits.length}`];
  const problems: string[] = [];
  const fields: Array<[string, number, number]> = [
    ['field 1', 0, 9],
    ['field 2', 10, 20],
    ['field 3', 21, 31],
  ];
  for (const [name, start, digitAt] of fields) {
    const expected = modulo10(digits.slice(start, digitAt));
    if (Number(digits[digitAt]) !== expected)
      problems.push(`${name} check digit (position ${digitAt + 1}) is ${digits[digitAt]}, modulo 10 gives ${expected}`);
  }
  const rebuilt = barcodeFromTypeableLine(digits);
  if (rebuilt !== barcode) problems.push(`typeable line encodes barcode ${rebuilt}, not ${barcode}`);
  return problems;
}

/** The barcode a (47-digit) typeable line stands for: its check digits dropped, fields back in barcode order. */
export function barcodeFromTypeableLine(line: string): string {
  const d = line.replace(/[\s.]/g, '');
  return d.slice(0, 4) + d[32] + d.slice(33, 47) + d.slice(4, 9) + d.slice(10, 20) + d.slice(21, 31);
}

function modulo10(digits: string): number {
  let sum = 0;
  [...digits].reverse().forEach((d, i) => {
    const product = Number(d) * (i % 2 === 0 ? 2 : 1);
    sum += Math.floor(product / 10) + (product % 10);
  });
  return (10 - (sum % 10)) % 10;
}

/* ------------------------------------------------------------------------------------------------ */
/* PIX BR Code (EMV QRCPS-MPM as profiled by the BCB)                                                */
/* ------------------------------------------------------------------------------------------------ */

export interface BrCode {
  /** Top-level fields in order of appearance (values as text, templates unparsed). */
  entries: Array<{ id: string; value: string }>;
  /** The same fields by 2-digit id (a Record orders numeric keys itself: use entries for order). */
  fields: Record<string, string>;
  /** Sub-fields of the templates (26-51 merchant account information, 62 additional data, 80-99). */
  templates: Record<string, Record<string, string>>;
  /** Field 54, as written (e.g. "12.34"); null when the payer chooses the amount. */
  amount: string | null;
  /** Field 62, sub-field 05. */
  txid: string | null;
  /** Sub-field 01 of the br.gov.bcb.pix merchant account template. */
  pixKey: string | null;
  merchantName: string | null;
  merchantCity: string | null;
  /** Field 63, 4 hex digits. */
  crc: string | null;
}

const TEMPLATE_IDS = (id: number) => (id >= 26 && id <= 51) || id === 62 || (id >= 80 && id <= 99);

/** Parses a BR Code's TLV structure (id 2 digits, length 2 digits, value); throws when it does not hold. */
export function parseBrCode(text: string): BrCode {
  const entries = parseTlv(text, 'BR Code');
  const fields = Object.fromEntries(entries.map(({ id, value }) => [id, value]));
  const templates: Record<string, Record<string, string>> = {};
  for (const { id, value } of entries) {
    if (TEMPLATE_IDS(Number(id)))
      templates[id] = Object.fromEntries(parseTlv(value, `template ${id}`).map((e) => [e.id, e.value]));
  }
  const pixAccount = Object.entries(templates).find(
    ([id, sub]) => Number(id) <= 51 && sub['00']?.toLowerCase() === 'br.gov.bcb.pix',
  );
  return {
    entries,
    fields,
    templates,
    amount: fields['54'] ?? null,
    txid: templates['62']?.['05'] ?? null,
    pixKey: pixAccount?.[1]['01'] ?? null,
    merchantName: fields['59'] ?? null,
    merchantCity: fields['60'] ?? null,
    crc: fields['63'] ?? null,
  };
}

function parseTlv(text: string, where: string): Array<{ id: string; value: string }> {
  const out: Array<{ id: string; value: string }> = [];
  let i = 0;
  while (i < text.length) {
    const id = text.slice(i, i + 2);
    const lengthText = text.slice(i + 2, i + 4);
    if (!/^\d{2}$/.test(id) || !/^\d{2}$/.test(lengthText))
      throw new Error(`${where}: bad TLV header "${id}${lengthText}" at offset ${i}`);
    const length = Number(lengthText);
    const value = text.slice(i + 4, i + 4 + length);
    if (value.length !== length)
      throw new Error(`${where}: field ${id} announces ${length} characters, only ${value.length} left`);
    if (out.some((e) => e.id === id)) throw new Error(`${where}: field ${id} appears twice`);
    out.push({ id, value });
    i += 4 + length;
  }
  return out;
}

/**
 * Problems of a PIX BR Code: TLV structure, payload format 01 first, a merchant account template with
 * GUI br.gov.bcb.pix and a key (or a location URL), merchant category, currency 986, country BR, name
 * (1-25) and city (1-15), a well-formed amount and txid, and the CRC16-CCITT-FALSE of field 63, last.
 */
export function brCodeProblems(text: string): string[] {
  let code: BrCode;
  try {
    code = parseBrCode(text);
  } catch (err) {
    return [(err as Error).message];
  }
  const problems: string[] = [];
  const ids = code.entries.map((e) => e.id);
  if (ids[0] !== '00' || code.fields['00'] !== '01')
    problems.push('field 00 (payload format indicator) must come first with value 01');
  const pixAccount = Object.entries(code.templates).find(
    ([id, sub]) => Number(id) <= 51 && sub['00']?.toLowerCase() === 'br.gov.bcb.pix',
  );
  if (!pixAccount) problems.push('no merchant account template (26-51) with GUI br.gov.bcb.pix');
  else if (!pixAccount[1]['01'] && !pixAccount[1]['25'])
    problems.push(`template ${pixAccount[0]} has neither a PIX key (01) nor a location URL (25)`);
  if (!/^\d{4}$/.test(code.fields['52'] ?? '')) problems.push('field 52 (merchant category code) must be 4 digits');
  if (code.fields['53'] !== '986')
    problems.push(`field 53 (currency) must be 986, is ${code.fields['53'] ?? 'missing'}`);
  if (code.fields['58'] !== 'BR') problems.push(`field 58 (country) must be BR, is ${code.fields['58'] ?? 'missing'}`);
  if (!code.merchantName || code.merchantName.length > 25)
    problems.push('field 59 (merchant name) must have 1 to 25 characters');
  if (!code.merchantCity || code.merchantCity.length > 15)
    problems.push('field 60 (merchant city) must have 1 to 15 characters');
  if (code.amount !== null && !/^\d{1,10}(\.\d{1,2})?$/.test(code.amount))
    problems.push(`field 54 (amount) is not a decimal amount: "${code.amount}"`);
  if (code.txid !== null && !/^(\*\*\*|[A-Za-z0-9]{1,25})$/.test(code.txid))
    problems.push(`field 62-05 (txid) must be 1 to 25 letters or digits, is "${code.txid}"`);
  if (ids[ids.length - 1] !== '63' || code.crc === null || code.crc.length !== 4) {
    problems.push('field 63 (CRC) must be the last field, 4 hex digits');
  } else {
    const expected = crc16CcittFalse(text.slice(0, -4));
    if (code.crc !== expected) problems.push(`CRC is ${code.crc}, CRC16-CCITT-FALSE of the payload is ${expected}`);
  }
  return problems;
}

/** CRC16-CCITT-FALSE (polynomial 0x1021, initial 0xFFFF, no reflection) of the UTF-8 text, as 4 upper hex digits. */
export function crc16CcittFalse(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/* ------------------------------------------------------------------------------------------------ */
/* QR code image                                                                                    */
/* ------------------------------------------------------------------------------------------------ */

/** The text a PNG QR code decodes to, as a phone's camera would read it; throws when it finds none. */
export function decodeQrPng(png: Buffer): string {
  const image = PNG.sync.read(png);
  const found = jsQR(
    new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length),
    image.width,
    image.height,
  );
  if (!found) throw new Error('no QR code found in the image');
  return found.data;
}
