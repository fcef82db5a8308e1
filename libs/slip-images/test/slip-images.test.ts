import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { decodeQrPng } from '@payments/test-support/slip-checks';
import { drawItf, ITF_BAR_HEIGHT, ITF_NARROW_MODULE, itfBarWidths, qrCodePng } from '../src';

const vector: { barcode: string } = JSON.parse(
  readFileSync(join(__dirname, '../../../test-vectors/boleto.json'), 'utf8'),
)[0];

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

const BR_CODE =
  '00020126450014br.gov.bcb.pix0118fulano@example.com0201x520400005303986540512.345802BR5913FULANO DE TAL6009SAO PAULO62100506ABC1236304F170';

describe('ITF barcode', () => {
  it('draws the 44 digits as ITF with wide elements three modules wide', () => {
    const widths = itfBarWidths(vector.barcode);
    expect(new Set(widths.filter((w) => w > 0))).toEqual(new Set([1, 3]));
    expect(decodeItf(widths.slice(0, 4 + 220 + 3))).toBe(vector.barcode);
    // 44 digits x (2 wide + 3 narrow) + start (4) + stop (3 + 1 + 1): about 103 mm at 0.254 mm a module.
    expect(widths.slice(0, 227).reduce((a, b) => a + b, 0)).toBe(44 * 9 + 4 + 5);
  });

  it('refuses anything but 44 digits', () => {
    expect(() => itfBarWidths('123')).toThrow(/44 digits/);
    expect(() => itfBarWidths(`${vector.barcode.slice(0, 43)}x`)).toThrow(/44 digits/);
  });

  it('puts one rectangle per bar, from x on, filled once in black', () => {
    const rects: number[][] = [];
    const calls: string[] = [];
    const canvas = {
      rect: (x: number, y: number, w: number, h: number) => rects.push([x, y, w, h]),
      fillColor(color: string) {
        calls.push(`fillColor ${color}`);
        return canvas;
      },
      fill: () => calls.push('fill'),
    };
    drawItf(canvas, vector.barcode, 100, 50);
    // Bars are the even elements; each starts where the elements before it end.
    const expected: number[][] = [];
    let x = 100;
    itfBarWidths(vector.barcode).forEach((modules, i) => {
      if (i % 2 === 0) expected.push([x, 50, modules * ITF_NARROW_MODULE, ITF_BAR_HEIGHT]);
      x += modules * ITF_NARROW_MODULE;
    });
    expect(rects).toHaveLength(expected.length);
    rects.forEach((rect, i) => rect.forEach((v, k) => expect(v).toBeCloseTo(expected[i][k], 9)));
    expect(calls).toEqual(['fillColor #000000', 'fill']);
    // FEBRABAN: 13 mm tall, about 103 mm wide.
    expect(ITF_BAR_HEIGHT / (72 / 25.4)).toBeCloseTo(13, 6);
    const modules = itfBarWidths(vector.barcode)
      .slice(0, 227)
      .reduce((a, b) => a + b, 0);
    expect((modules * ITF_NARROW_MODULE) / (72 / 25.4)).toBeCloseTo(102.87, 6);
  });
});

describe('QR code PNG', () => {
  it('makes a PNG QR code that decodes to the BR Code text', () => {
    const png = qrCodePng(BR_CODE, { margin: 2, scale: 8 });
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(decodeQrPng(png)).toBe(BR_CODE);
  });

  it('is 1-bit grayscale, whole pixels per module, the margin in modules around the matrix', () => {
    const size = QRCode.create(BR_CODE, { errorCorrectionLevel: 'M' }).modules.size;
    for (const [options, side] of [
      [{}, size * 6],
      [{ scale: 3, margin: 4 }, (size + 8) * 3],
    ] as const) {
      const png = qrCodePng(BR_CODE, options);
      expect(png.readUInt32BE(16)).toBe(side); // IHDR width
      expect(png.readUInt32BE(20)).toBe(side);
      expect([png[24], png[25]]).toEqual([1, 0]); // bit depth 1, grayscale
      const image = PNG.sync.read(png);
      expect([image.width, image.height]).toEqual([side, side]);
      expect(decodeQrPng(png)).toBe(BR_CODE);
    }
  });

  it('draws each module as scale x scale pixels, black where the matrix is dark', () => {
    const { size, data } = QRCode.create(BR_CODE, { errorCorrectionLevel: 'M' }).modules;
    const scale = 3;
    const margin = 2;
    const image = PNG.sync.read(qrCodePng(BR_CODE, { scale, margin }));
    const side = (size + 2 * margin) * scale;
    for (let y = 0; y < side; y += 1) {
      for (let x = 0; x < side; x += 1) {
        const r = Math.floor(y / scale) - margin;
        const c = Math.floor(x / scale) - margin;
        const dark = r >= 0 && r < size && c >= 0 && c < size && data[r * size + c] === 1;
        if (image.data[(y * side + x) * 4] !== (dark ? 0 : 255))
          throw new Error(`pixel ${x},${y} should be ${dark ? 'black' : 'white'}`);
      }
    }
  });

  it('refuses a scale or margin that is not a whole number of pixels or modules', () => {
    expect(() => qrCodePng(BR_CODE, { scale: 0 })).toThrow(RangeError);
    expect(() => qrCodePng(BR_CODE, { scale: 2.5 })).toThrow(RangeError);
    expect(() => qrCodePng(BR_CODE, { margin: -1 })).toThrow(RangeError);
  });
});
