import bwipjs from 'bwip-js';
import QRCode, { type QRCodeToBufferOptions } from 'qrcode';

/**
 * PNG of the QR code a banking app scans: the BR Code text, medium error correction. PNG filter "Up":
 * a QR code's pixel rows repeat module after module, so they filter to zeros; pngjs's default tries all
 * five filters on every row for a few KB less and is several times slower.
 */
export function qrCodePng(brCode: string, widthPx = 360): Promise<Buffer> {
  // @types/qrcode lists only the deflate options, but qrcode hands rendererOpts to pngjs whole.
  const options: QRCodeToBufferOptions & { rendererOpts: { filterType: number } } = {
    type: 'png',
    errorCorrectionLevel: 'M',
    margin: 2,
    width: widthPx,
    rendererOpts: { filterType: PNG_FILTER_UP },
  };
  return QRCode.toBuffer(brCode, options);
}

const PNG_FILTER_UP = 2;

/**
 * The bars of the slip's ITF (interleaved 2 of 5) barcode as alternating bar/space widths in narrow
 * modules, starting with a bar. bwip-js encodes the 44 digits (start, pairs, stop); it draws wide
 * elements 2 modules wide, and we widen them to 3 (FEBRABAN asks a wide:narrow ratio of 2.25 to 3).
 */
export function itfBarWidths(barcode: string): number[] {
  if (!/^\d{44}$/.test(barcode)) throw new RangeError(`a slip barcode has 44 digits, got "${barcode}"`);
  const [symbol] = bwipjs.raw('interleaved2of5', barcode, {});
  if (!symbol || !('sbs' in symbol)) throw new Error('bwip-js returned no linear pattern for interleaved2of5');
  return symbol.sbs.map((width) => (width === 2 ? 3 : width));
}
