import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatePixPayload } from '@brazilian-utils/brazilian-utils';
import { brCodeProblems, crc16CcittFalse, parseBrCode } from '@payments/test-support/slip-checks';
import { buildBrCode, toMerchantText, txidForOurNumber } from '../src/domain/br-code';

interface PixVector {
  br_code: string;
  key: string;
  amount: number;
  merchant_name: string;
  merchant_city: string;
  txid: string;
  crc: string;
}
const vectors: PixVector[] = JSON.parse(readFileSync(join(__dirname, '../../../test-vectors/pix.json'), 'utf8'));
const receiver = {
  key: '5f84a4c5-c5cb-4599-9f13-7eb4d419dacc',
  merchantName: 'PAYMENTS SANDBOX LTDA',
  merchantCity: 'SAO PAULO',
};

it.each(vectors)('the library we build BR Codes with reproduces the public vector, CRC included', (v) => {
  // The vector carries "0201x" (additional info "x") in its merchant account template.
  const brCode = generatePixPayload({
    key: v.key,
    merchantName: v.merchant_name,
    merchantCity: v.merchant_city,
    amount: v.amount,
    txid: v.txid,
    description: 'x',
  });
  expect(brCode).toBe(v.br_code);
  expect(v.br_code.slice(-4)).toBe(v.crc);
  // And the CRC, computed independently over everything up to and including "6304".
  expect(crc16CcittFalse(v.br_code.slice(0, -4))).toBe(v.crc);
});

it('builds a BR Code with the key, amount, name, city and txid, valid by independent checks', () => {
  const text = buildBrCode(receiver, 12_345, txidForOurNumber('00000000042'));
  expect(brCodeProblems(text)).toEqual([]);
  expect(parseBrCode(text)).toMatchObject({
    amount: '123.45',
    txid: 'SBX00000000042',
    pixKey: receiver.key,
    merchantName: 'PAYMENTS SANDBOX LTDA',
    merchantCity: 'SAO PAULO',
    fields: { '00': '01', '52': '0000', '53': '986', '58': 'BR' },
    templates: { '26': { '00': 'br.gov.bcb.pix', '01': receiver.key } },
  });
  expect(text.slice(-8, -4)).toBe('6304');
});

it('writes amounts exactly, from one cent to the largest value', () => {
  for (const [cents, written] of [
    [1, '0.01'],
    [10, '0.10'],
    [100_000, '1000.00'],
    [1_005, '10.05'],
    [999_999_999_999, '9999999999.99'],
  ] as const) {
    const text = buildBrCode(receiver, cents, 'T1');
    expect(parseBrCode(text).amount).toBe(written);
    expect(brCodeProblems(text)).toEqual([]);
  }
});

it('refuses what would make an invalid BR Code', () => {
  expect(() => buildBrCode(receiver, 0, 'T1')).toThrow(/amount/);
  expect(() => buildBrCode(receiver, 100, 'has-dash')).toThrow(/txid/);
  expect(() => buildBrCode({ ...receiver, merchantCity: 'São Paulo' }, 100, 'T1')).toThrow(/merchant city/);
  expect(() => buildBrCode({ ...receiver, merchantName: 'A'.repeat(26) }, 100, 'T1')).toThrow(/merchant name/);
  expect(() => buildBrCode({ ...receiver, key: 'not a pix key' }, 100, 'T1')).toThrow(/PIX key/);
});

it('turns configured names into BR Code text: no accents, upper case, ASCII', () => {
  expect(toMerchantText('São João d’Aliança')).toBe('SAO JOAO DALIANCA');
  expect(txidForOurNumber('00000000001')).toMatch(/^[A-Za-z0-9]{1,25}$/);
});
