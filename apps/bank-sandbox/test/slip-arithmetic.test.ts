import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { barcodeProblems, typeableLineProblems } from '@payments/test-support/slip-checks';
import { buildBarcode, typeableLineFromBarcode } from '../src/domain/barcode';
import { bankSlipModulo11, modulo10 } from '../src/domain/check-digits';
import { dueDateFactor } from '../src/domain/due-factor';
import { buildFreeField, parseFreeField } from '../src/domain/free-field';

interface BoletoVector {
  barcode: string;
  typeable_line: string;
  bank: string;
  due_factor: string;
  due_date_before_2025_reset: string;
  value: number;
}
const vectors: BoletoVector[] = JSON.parse(readFileSync(join(__dirname, '../../../test-vectors/boleto.json'), 'utf8'));

describe('check digits', () => {
  it('modulo 10 weighs 2,1 from the right and sums the digits of products', () => {
    // 2379 0448 0 -> field 1 of the vector's typeable line ends in 9.
    expect(modulo10('237904480')).toBe(9);
    // By hand: 1*2 = 2 -> 10 - 2 = 8; 5*2 = 10 -> 1 + 0 = 1 -> 9; 0 -> 0.
    expect(modulo10('1')).toBe(8);
    expect(modulo10('5')).toBe(9);
    expect(modulo10('0')).toBe(0);
    // 9*2 = 18 -> 9; 9*1 = 9: 18 -> 10 - 8 = 2.
    expect(modulo10('99')).toBe(2);
  });

  it('bank-slip modulo 11 weighs 2..9 from the right, and 0, 10, 11 become 1', () => {
    const vector = vectors[0].barcode;
    expect(bankSlipModulo11(vector.slice(0, 4) + vector.slice(5))).toBe(Number(vector[4]));
    // By hand: "1" -> 2, 11 - 2 = 9. "5" -> 10, 11 - 10 = 1. "0" -> 0, 11 - 0 = 11 -> 1.
    expect(bankSlipModulo11('1')).toBe(9);
    expect(bankSlipModulo11('5')).toBe(1);
    expect(bankSlipModulo11('0')).toBe(1);
    // "6" -> 12 mod 11 = 1, 11 - 1 = 10 -> 1 (the utility-bill rule would give 0).
    expect(bankSlipModulo11('6')).toBe(1);
    // 9 digits: weights wrap 2..9 then 2: "100000000" -> 1*2 = 2 -> 9.
    expect(bankSlipModulo11('100000000')).toBe(9);
  });

  it('refuses anything but digits', () => {
    expect(() => modulo10('12a')).toThrow(RangeError);
    expect(() => bankSlipModulo11('')).toThrow(RangeError);
  });
});

describe('due-date factor', () => {
  it.each([
    ['2008-11-01', '4043'], // the public vector, under the pre-2025 rule
    ['1997-10-08', '0001'],
    ['2000-07-03', '1000'],
    ['2025-02-21', '9999'],
    ['2025-02-22', '1000'], // the reset
    ['2025-02-23', '1001'],
    ['2049-10-13', '9999'], // 2025-02-22 + 8,999 days
    ['2049-10-14', '1000'], // and round again
  ])('%s -> %s', (date, factor) => {
    expect(dueDateFactor(date)).toBe(factor);
  });

  it('refuses the base date and what is not a calendar date', () => {
    expect(() => dueDateFactor('1997-10-07')).toThrow(RangeError);
    expect(() => dueDateFactor('2025-02-30')).toThrow(RangeError);
    expect(() => dueDateFactor('21/02/2025')).toThrow(RangeError);
  });
});

describe('barcode and typeable line', () => {
  it.each(vectors)('rebuilds the public vector from its parts and its typeable line', (v) => {
    const rebuilt = buildBarcode({
      bankCode: v.bank,
      amountCents: Math.round(v.value * 100),
      dueDate: v.due_date_before_2025_reset,
      freeField: v.barcode.slice(19),
    });
    expect(rebuilt).toBe(v.barcode);
    expect(typeableLineFromBarcode(v.barcode)).toBe(v.typeable_line);
  });

  it('makes barcodes and lines that independent checks accept, for many amounts, dates and numbers', () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 300; i += 1) {
      const amountCents = 1 + random(9_999_999_999);
      const dueDate = new Date(Date.UTC(2024, 0, 1) + random(30 * 365) * 86_400_000).toISOString().slice(0, 10);
      const ourNumber = String(1 + random(99_999_999)).padStart(11, '0');
      const barcode = buildBarcode({
        bankCode: '999',
        amountCents,
        dueDate,
        freeField: buildFreeField({ agency: '0001', wallet: '09', ourNumber, account: '0123456' }),
      });
      expect(barcodeProblems(barcode, { amountCents, dueDate })).toEqual([]);
      expect(typeableLineProblems(typeableLineFromBarcode(barcode), barcode)).toEqual([]);
    }
  });

  it('puts values above R$ 99,999,999.99 in the factor and value fields together (no due-date factor)', () => {
    const freeField = buildFreeField({ agency: '1', wallet: '9', ourNumber: '7', account: '1' });
    const barcode = buildBarcode({ bankCode: '999', amountCents: 999_999_999_999, dueDate: '2030-01-01', freeField });
    expect(barcode.slice(5, 19)).toBe('00999999999999');
    expect(barcodeProblems(barcode)).toEqual([]);
  });

  it('refuses malformed parts', () => {
    const freeField = '0'.repeat(25);
    expect(() => buildBarcode({ bankCode: '99', amountCents: 1, dueDate: '2030-01-01', freeField })).toThrow(
      /bank code/,
    );
    expect(() => buildBarcode({ bankCode: '999', amountCents: 1.5, dueDate: '2030-01-01', freeField })).toThrow(
      /amount/,
    );
    expect(() => buildBarcode({ bankCode: '999', amountCents: 1, dueDate: '2030-01-01', freeField: '1' })).toThrow(
      /free field/,
    );
    expect(() => typeableLineFromBarcode('123')).toThrow(/44 digits/);
  });
});

describe('free field', () => {
  it('carries our_number whole: agency 4, wallet 2, our_number 11, account 7, then 0', () => {
    const parts = { agency: '0001', wallet: '09', ourNumber: '00000012345', account: '0123456' };
    const field = buildFreeField(parts);
    expect(field).toBe('0001' + '09' + '00000012345' + '0123456' + '0');
    expect(parseFreeField(field)).toEqual(parts);
  });

  it('zero-pads shorter parts and round-trips through a barcode', () => {
    const field = buildFreeField({ agency: '12', wallet: '9', ourNumber: '98765432109', account: '77' });
    const barcode = buildBarcode({ bankCode: '999', amountCents: 100, dueDate: '2026-03-10', freeField: field });
    expect(parseFreeField(barcode.slice(19))).toEqual({
      agency: '0012',
      wallet: '09',
      ourNumber: '98765432109',
      account: '0000077',
    });
  });

  it('refuses parts that do not fit', () => {
    expect(() => buildFreeField({ agency: '12345', wallet: '09', ourNumber: '1', account: '1' })).toThrow(/agency/);
    expect(() => buildFreeField({ agency: '1', wallet: '09', ourNumber: '123456789012', account: '1' })).toThrow(
      /ourNumber/,
    );
    expect(() => parseFreeField('1'.repeat(25))).toThrow(/free field/);
  });
});
