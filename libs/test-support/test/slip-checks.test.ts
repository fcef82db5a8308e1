import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import QRCode from 'qrcode';
import {
  barcodeFromTypeableLine,
  barcodeProblems,
  brCodeProblems,
  crc16CcittFalse,
  decodeQrPng,
  dueFactorOf,
  parseBarcode,
  parseBrCode,
  typeableLineProblems,
} from '../src/slip-checks';

interface BoletoVector {
  barcode: string;
  typeable_line: string;
  due_factor: string;
  due_date_before_2025_reset: string;
  value: number;
}
interface PixVector {
  br_code: string;
  key: string;
  amount: number;
  merchant_name: string;
  merchant_city: string;
  txid: string;
  crc: string;
}

const vectors = join(__dirname, '../../../test-vectors');
const boleto: BoletoVector[] = JSON.parse(readFileSync(join(vectors, 'boleto.json'), 'utf8'));
const pix: PixVector[] = JSON.parse(readFileSync(join(vectors, 'pix.json'), 'utf8'));

/** Replaces the digit at a 0-based position with another digit. */
function changeDigit(text: string, at: number): string {
  return text.slice(0, at) + String((Number(text[at]) + 1) % 10) + text.slice(at + 1);
}

/** A BR Code with one top-level field replaced and its CRC recomputed, so only that field is wrong. */
function withField(text: string, id: string, value: string): string {
  const body = parseBrCode(text)
    .entries.filter((e) => e.id !== '63')
    .map((e) => (e.id === id ? { id, value } : e))
    .map((e) => e.id + String(e.value.length).padStart(2, '0') + e.value)
    .join('');
  return `${body}6304${crc16CcittFalse(`${body}6304`)}`;
}

describe('bank slip barcode', () => {
  it.each(boleto)('accepts the public vector $barcode', (v) => {
    expect(barcodeProblems(v.barcode)).toEqual([]);
    expect(
      barcodeProblems(v.barcode, { amountCents: Math.round(v.value * 100), dueDate: v.due_date_before_2025_reset }),
    ).toEqual([]);
    expect(parseBarcode(v.barcode)).toMatchObject({
      bankCode: '237',
      currency: '9',
      dueFactor: v.due_factor,
      valueCents: 124020,
    });
  });

  it('finds a changed digit anywhere through the general check digit', () => {
    const { barcode } = boleto[0];
    for (let at = 0; at < 44; at += 1) {
      if (at === 3) continue; // the currency digit has its own message
      expect(barcodeProblems(changeDigit(barcode, at)).join()).toMatch(/check digit/);
    }
  });

  it('names the wrong length, a non-digit, a currency other than 9, and a value or date it does not encode', () => {
    const { barcode } = boleto[0];
    expect(barcodeProblems(barcode.slice(1))).toEqual(['barcode must have 44 digits, has 43']);
    expect(barcodeProblems(`${barcode.slice(0, 43)}x`)[0]).toMatch(/only digits/);
    expect(barcodeProblems(`${barcode.slice(0, 3)}0${barcode.slice(4)}`).join()).toMatch(/currency code/);
    expect(barcodeProblems(barcode, { amountCents: 124021 })).toEqual(['value field is 124020 cents, expected 124021']);
    expect(barcodeProblems(barcode, { dueDate: '2008-11-02' })[0]).toMatch(
      /due-date factor is 4043, 2008-11-02 gives 4044/,
    );
  });

  it('uses the bank-slip modulo-11 rule: 11 - remainder of 10 or 11 makes the digit 1, not 0', () => {
    // Weighted sum of the 43 digits other than the check digit, weights 2..9 from the right, done here by hand.
    const remainder = (b: string) =>
      [...(b.slice(0, 4) + b.slice(5))].reverse().reduce((sum, d, i) => sum + Number(d) * (2 + (i % 8)), 0) % 11;
    const base = boleto[0].barcode;
    const candidates = Array.from({ length: 10 }, (_, d) => base.slice(0, 43) + d);
    for (const wanted of [0, 1]) {
      const found = candidates.find((b) => remainder(b) === wanted);
      expect(found).toBeDefined();
      const withDigit = (dv: number) => found!.slice(0, 4) + dv + found!.slice(5);
      expect(barcodeProblems(withDigit(1))).toEqual([]);
      expect(barcodeProblems(withDigit(0)).join()).toMatch(/modulo 11 gives 1/);
    }
  });

  it('computes the due-date factor across the 2025 reset', () => {
    expect(dueFactorOf('2008-11-01')).toBe('4043');
    expect(dueFactorOf('2000-07-03')).toBe('1000');
    expect(dueFactorOf('2025-02-21')).toBe('9999');
    expect(dueFactorOf('2025-02-22')).toBe('1000');
    expect(dueFactorOf('2025-02-23')).toBe('1001');
  });
});

describe('typeable line', () => {
  it.each(boleto)('accepts the public vector $typeable_line', (v) => {
    expect(typeableLineProblems(v.typeable_line, v.barcode)).toEqual([]);
    expect(barcodeFromTypeableLine(v.typeable_line)).toBe(v.barcode);
    // As printed, with dots and spaces.
    const l = v.typeable_line;
    const printed = `${l.slice(0, 5)}.${l.slice(5, 10)} ${l.slice(10, 15)}.${l.slice(15, 21)} ${l.slice(21, 26)}.${l.slice(26, 32)} ${l[32]} ${l.slice(33)}`;
    expect(typeableLineProblems(printed, v.barcode)).toEqual([]);
  });

  it('names a wrong field check digit, the wrong length, and a line for another barcode', () => {
    const { typeable_line: line, barcode } = boleto[0];
    expect(typeableLineProblems(changeDigit(line, 9), barcode)[0]).toMatch(/field 1 check digit/);
    expect(typeableLineProblems(changeDigit(line, 20), barcode)[0]).toMatch(/field 2 check digit/);
    expect(typeableLineProblems(changeDigit(line, 31), barcode)[0]).toMatch(/field 3 check digit/);
    expect(typeableLineProblems(changeDigit(line, 12), barcode).join()).toMatch(/field 2 check digit.*encodes barcode/);
    expect(typeableLineProblems(line.slice(0, 46), barcode)).toEqual(['typeable line must have 47 digits, has 46']);
    expect(typeableLineProblems(changeDigit(line, 40), barcode)).toEqual([
      expect.stringMatching(/^typeable line encodes barcode/),
    ]);
  });
});

describe('PIX BR Code', () => {
  it.each(pix)('accepts and parses the public vector', (v) => {
    expect(brCodeProblems(v.br_code)).toEqual([]);
    expect(crc16CcittFalse(v.br_code.slice(0, -4))).toBe(v.crc);
    expect(parseBrCode(v.br_code)).toMatchObject({
      amount: v.amount.toFixed(2),
      txid: v.txid,
      pixKey: v.key,
      merchantName: v.merchant_name,
      merchantCity: v.merchant_city,
      crc: v.crc,
    });
  });

  it('checks the CRC with the reference value of CRC16-CCITT-FALSE', () => {
    expect(crc16CcittFalse('123456789')).toBe('29B1');
  });

  it('finds a changed character through the CRC', () => {
    const text = pix[0].br_code.replace('12.34', '12.35');
    expect(brCodeProblems(text)).toEqual([expect.stringMatching(/^CRC is F170, CRC16-CCITT-FALSE of the payload is/)]);
  });

  it('names a wrong currency, country, missing GUI, bad amount, and broken TLV', () => {
    const good = pix[0].br_code;
    expect(brCodeProblems(withField(good, '53', '840'))).toEqual(['field 53 (currency) must be 986, is 840']);
    expect(brCodeProblems(withField(good, '58', 'US'))).toEqual(['field 58 (country) must be BR, is US']);
    expect(brCodeProblems(withField(good, '26', '0014br.gov.bcb.xyz0118fulano@example.com'))).toEqual([
      'no merchant account template (26-51) with GUI br.gov.bcb.pix',
    ]);
    expect(brCodeProblems(withField(good, '54', '12,34'))[0]).toMatch(/field 54/);
    expect(brCodeProblems(good.slice(0, -1))[0]).toMatch(/field 63 announces 4 characters/);
    expect(brCodeProblems(`${good.slice(0, -8)}6304`)[0]).toMatch(/field 63/);
  });
});

describe('QR code image', () => {
  it('decodes a PNG QR code back to its BR Code', async () => {
    const png = await QRCode.toBuffer(pix[0].br_code, { type: 'png', errorCorrectionLevel: 'M' });
    expect(decodeQrPng(png)).toBe(pix[0].br_code);
  });

  it('throws on a PNG without a QR code', async () => {
    const { PNG } = await import('pngjs');
    const blank = new PNG({ width: 64, height: 64 });
    blank.data.fill(255);
    expect(() => decodeQrPng(PNG.sync.write(blank))).toThrow(/no QR code/);
  });
});
