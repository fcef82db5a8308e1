import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeQrPng } from '@payments/test-support/slip-checks';
import { itfBarWidths, qrCodePng } from '../src/domain/payment-images';

const vector: { barcode: string } = JSON.parse(readFileSync(join(__dirname, '../../../test-vectors/boleto.json'), 'utf8'))[0];

/** Interleaved 2 of 5 digit patterns (N narrow, W wide), from the symbology's definition. */
const ITF_DIGITS = ['NNWWN', 'WNNNW', 'NWNNW', 'WWNNN', 'NNWNW', 'WNWNN', 'NWWNN', 'NNNWW', 'WNNWN', 'NWNWN'];

/** Reads ITF back from bar/space widths: start NNNN, then digit pairs (bars = 1st, spaces = 2nd), stop WNN. */
function decodeItf(widths: number[]): string {
  const pattern = widths.map((w) => (w === 1 ? 'N' : 'W')).join('');
  expect(pattern.startsWith('NNNN')).toBe(true);
  let digits = '';
  let i = 4;
  while (i + 10 <= pattern.length - 3) {
    const pair = pattern.slice(i, i + 10);
    const bars = [0, 2, 4, 6, 8].map((k) => pair[k]).join('');
    const spaces = [1, 3, 5, 7, 9].map((k) => pair[k]).join('');
    digits += String(ITF_DIGITS.indexOf(bars)) + String(ITF_DIGITS.indexOf(spaces));
    i += 10;
  }
  expect(pattern.slice(i, i + 3)).toBe('WNN');
  return digits;
}

it('draws the 44 digits as ITF with wide elements three modules wide', () => {
  const widths = itfBarWidths(vector.barcode);
  expect(new Set(widths.filter((w) => w > 0))).toEqual(new Set([1, 3]));
  expect(decodeItf(widths.slice(0, 4 + 220 + 3))).toBe(vector.barcode);
  // 44 digits x (2 wide + 3 narrow) + start (4) + stop (3 + 1 + 1): about 103 mm at 0.254 mm a module.
  expect(widths.slice(0, 227).reduce((a, b) => a + b, 0)).toBe(44 * 9 + 4 + 5);
});

it('refuses anything but 44 digits', () => {
  expect(() => itfBarWidths('123')).toThrow(/44 digits/);
});

it('makes a PNG QR code that decodes to the BR Code text', async () => {
  const text = '00020126450014br.gov.bcb.pix0118fulano@example.com0201x520400005303986540512.345802BR5913FULANO DE TAL6009SAO PAULO62100506ABC1236304F170';
  const png = await qrCodePng(text);
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  expect(decodeQrPng(png)).toBe(text);
});
