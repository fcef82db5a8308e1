import { INK, LABEL, PAD, RULE } from './booklet-layout';

/** Text set on a booklet's pages: labelled boxes, and text cut, shrunk, aligned or broken to fit. */

/** A labelled box: small grey label at the top, the value in bold under it (cut with an ellipsis to fit). */
export function field(
  pdf: PDFKit.PDFDocument,
  label: string,
  value: string,
  x: number,
  y: number,
  width: number,
  height: number,
  options: { align?: 'left' | 'right'; size?: number } = {},
): void {
  pdf.rect(x, y, width, height).lineWidth(RULE).strokeColor(INK).stroke();
  pdf
    .font('Helvetica')
    .fontSize(5.5)
    .fillColor(LABEL)
    .text(label, x + PAD, y + 2.5, { lineBreak: false });
  if (!value) return;
  pdf.font('Helvetica-Bold').fillColor(INK);
  shrinkToFit(pdf, value, width - 2 * PAD, options.size ?? 8, 6.5);
  const text = fit(pdf, value, width - 2 * PAD);
  const valueY = y + 10.5;
  if (options.align === 'right') rightText(pdf, text, x + width - PAD, valueY);
  else pdf.text(text, x + PAD, valueY, { lineBreak: false });
}

/** The text cut (with an ellipsis) to fit `width` in the current font. */
export function fit(pdf: PDFKit.PDFDocument, text: string, width: number): string {
  if (pdf.widthOfString(text) <= width) return text;
  let low = 0;
  let high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (pdf.widthOfString(`${text.slice(0, mid)}…`) <= width) low = mid;
    else high = mid - 1;
  }
  return `${text.slice(0, low).trimEnd()}…`;
}

/** Sets the largest font size up to `size` (not below `min`) at which the text fits `width`. */
export function shrinkToFit(pdf: PDFKit.PDFDocument, text: string, width: number, size: number, min = 6): void {
  pdf.fontSize(size);
  const natural = pdf.widthOfString(text);
  if (natural > width) pdf.fontSize(Math.max(min, Math.floor(((size * width) / natural) * 4) / 4));
}

export function rightText(pdf: PDFKit.PDFDocument, text: string, right: number, y: number): void {
  pdf.text(text, right - pdf.widthOfString(text), y, { lineBreak: false });
}

export function centerText(pdf: PDFKit.PDFDocument, text: string, center: number, y: number): void {
  pdf.text(text, center - pdf.widthOfString(text) / 2, y, { lineBreak: false });
}

/**
 * A long unbroken code (PIX copy-and-paste) in Courier, broken every n characters: the largest size from
 * `maxSize` down to `minSize` whose lines fit `height`; at `minSize` it runs on regardless (never cut: a
 * cut code cannot be paid).
 */
export function monoBlock(
  pdf: PDFKit.PDFDocument,
  text: string,
  x: number,
  y: number,
  width: number,
  height: number,
  maxSize: number,
  minSize: number,
): void {
  let size = maxSize;
  let lines: string[] = [];
  for (; size >= minSize; size -= 0.5) {
    lines = chunk(text, Math.max(1, Math.floor(width / (0.6 * size))));
    if (lines.length * size * 1.15 <= height) break;
  }
  size = Math.max(size, minSize);
  pdf.font('Courier').fontSize(size).fillColor(INK);
  lines.forEach((line, index) => pdf.text(line, x, y + index * size * 1.15, { lineBreak: false }));
}

function chunk(text: string, length: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += length) lines.push(text.slice(i, i + length));
  return lines;
}
