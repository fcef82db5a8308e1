import bwipjs from 'bwip-js';

/**
 * The slip's ITF (interleaved 2 of 5) barcode, FEBRABAN style: 13 mm tall, a narrow module of 0.254 mm
 * (the 44 digits about 103 mm wide), wide elements 3 modules (FEBRABAN asks a wide:narrow ratio of 2.25
 * to 3). Sizes here are PDF points (1 mm = 72 / 25.4 pt).
 */
const MM = 72 / 25.4;
export const ITF_BAR_HEIGHT = 13 * MM;
export const ITF_NARROW_MODULE = 0.254 * MM;

/**
 * The bars as alternating bar/space widths in narrow modules, starting with a bar. bwip-js encodes the
 * 44 digits (start, pairs, stop); it draws wide elements 2 modules wide, and we widen them to 3.
 */
export function itfBarWidths(barcode: string): number[] {
  if (!/^\d{44}$/.test(barcode)) throw new RangeError(`a slip barcode has 44 digits, got "${barcode}"`);
  const [symbol] = bwipjs.raw('interleaved2of5', barcode, {});
  if (!symbol || !('sbs' in symbol)) throw new Error('bwip-js returned no linear pattern for interleaved2of5');
  return symbol.sbs.map((width) => (width === 2 ? 3 : width));
}

/** What drawItf needs of a pdfkit document (structural, so this lib does not depend on pdfkit). */
export interface BarCanvas {
  rect(x: number, y: number, width: number, height: number): unknown;
  fillColor(color: string): BarCanvas;
  fill(): unknown;
}

/**
 * Draws the barcode's bars as vector rectangles filled as one path, the first bar at `x` (the caller
 * leaves the quiet zone before it), top at `y`.
 */
export function drawItf(canvas: BarCanvas, barcode: string, x: number, y: number): void {
  let cursor = x;
  itfBarWidths(barcode).forEach((modules, index) => {
    const width = modules * ITF_NARROW_MODULE;
    if (index % 2 === 0 && width > 0) canvas.rect(cursor, y, width, ITF_BAR_HEIGHT);
    cursor += width;
  });
  canvas.fillColor('#000000').fill();
}
