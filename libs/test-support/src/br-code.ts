/**
 * A dynamic PIX BR Code (the `pixCopiaECola` of a charge at a bank) read the way a payer's bank app
 * reads it, written from the BCB's "Manual de Padrões para Iniciação do Pix" and EMV QRCPS-MPM, never
 * from the sandbox or the adapter. It builds on slip-checks' TLV parser and CRC16-CCITT-FALSE (one
 * independent implementation of each in this package) and adds what a charge's code carries that a
 * static one does not: the location URL in the merchant account template (sub-field 25), whose
 * payload holds the charge, and the txid placeholder `***` in 62-05.
 */
import jsQR from 'jsqr';
import { getDocumentProxy, getResolvedPDFJS } from 'unpdf';
import { pdfPageCount } from './pdf-text';
import { brCodeProblems, crc16CcittFalse, parseBrCode } from './slip-checks';

/** The GUI of a PIX merchant account template (26 to 51). */
export const PIX_GUI = 'br.gov.bcb.pix';
/** The BR Code's limits on name and city (fields 59 and 60). */
export const MAX_MERCHANT_NAME = 25;
export const MAX_MERCHANT_CITY = 15;

export interface PixBrCode {
  /** Field 00 (always "01"). */
  payloadFormat: string | null;
  /** Field 01: "12" for a code meant to be paid once, "11" reusable; absent is allowed. */
  pointOfInitiation: string | null;
  /** The id (26..51) of the template whose GUI is br.gov.bcb.pix, with that GUI as written. */
  merchantAccount: { id: string; gui: string } | null;
  /** Sub-field 01 of that template: a static code's key. */
  pixKey: string | null;
  /** Sub-field 25 of that template: the payload's location, without its scheme (as the manual asks). */
  location: string | null;
  merchantName: string | null;
  merchantCity: string | null;
  /** Field 54, when the code names an amount. */
  amount: string | null;
  /** Field 62, sub-field 05: `***` in a dynamic code (the txid is in the payload at the location). */
  txid: string | null;
  /** Field 63 as written, and the CRC16-CCITT-FALSE of everything before its value. */
  crc: string | null;
  crcComputed: string;
}

/** Decodes a PIX BR Code; throws, naming the offset, when its TLV structure does not hold. */
export function decodePixBrCode(text: string): PixBrCode {
  const code = parseBrCode(text);
  const account = Object.entries(code.templates).find(
    ([id, sub]) => Number(id) <= 51 && sub['00']?.toLowerCase() === PIX_GUI,
  );
  return {
    payloadFormat: code.fields['00'] ?? null,
    pointOfInitiation: code.fields['01'] ?? null,
    merchantAccount: account ? { id: account[0], gui: account[1]['00'] ?? '' } : null,
    pixKey: account?.[1]['01'] ?? null,
    location: account?.[1]['25'] ?? null,
    merchantName: code.merchantName,
    merchantCity: code.merchantCity,
    amount: code.amount,
    txid: code.txid,
    crc: code.crc,
    // The CRC covers the whole text up to and including "6304", the header of its own field.
    crcComputed: crc16CcittFalse(text.slice(0, -4)),
  };
}

/**
 * A name as a BR Code can carry it: accents dropped, printable ASCII, upper case, at most `max`
 * characters. A bank may keep lower case; compare through this on both sides.
 */
export function asMerchantText(value: string, max = MAX_MERCHANT_NAME): string {
  return value
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, '')
    .toUpperCase()
    .trim()
    .slice(0, max)
    .trim();
}

/** What a charge's code must say, when the test knows it. */
export interface PixBrCodeExpectation {
  /** The account holder's name as registered (compared as {@link asMerchantText} makes it). */
  merchantName?: string;
  /** The charge's location as the bank reports it (`loc.location`), with or without https://. */
  location?: string;
}

/**
 * Problems of a dynamic PIX BR Code (a charge's): everything slip-checks' brCodeProblems checks (TLV,
 * fields 00, 52, 53, 58-60, CRC last and right), plus a location URL in the br.gov.bcb.pix template,
 * no key beside it, `***` as the txid, and what `expected` names. [] means valid.
 */
export function dynamicPixBrCodeProblems(text: string, expected: PixBrCodeExpectation = {}): string[] {
  const problems = brCodeProblems(text);
  let code: PixBrCode;
  try {
    code = decodePixBrCode(text);
  } catch {
    return problems; // brCodeProblems already says why it does not parse
  }
  if (!code.location) problems.push(`no location URL (sub-field 25) in the ${PIX_GUI} template`);
  else {
    if (/^https?:\/\//i.test(code.location)) problems.push(`the location keeps its scheme: "${code.location}"`);
    if (!isUrlWithoutScheme(code.location)) problems.push(`the location is not a URL: "${code.location}"`);
  }
  if (code.pixKey !== null) problems.push(`a dynamic code names a key too (sub-field 01 "${code.pixKey}")`);
  if (code.txid !== '***') problems.push(`field 62-05 of a dynamic code must be ***, is ${code.txid ?? 'missing'}`);
  if (code.pointOfInitiation !== null && !['11', '12'].includes(code.pointOfInitiation))
    problems.push(`field 01 (point of initiation) must be 11 or 12, is ${code.pointOfInitiation}`);
  if (expected.merchantName !== undefined && code.merchantName !== null) {
    const want = asMerchantText(expected.merchantName);
    if (asMerchantText(code.merchantName) !== want)
      problems.push(`merchant name is "${code.merchantName}", the holder "${expected.merchantName}" gives "${want}"`);
  }
  if (expected.location !== undefined && code.location !== null) {
    const want = withoutScheme(expected.location);
    if (code.location !== want) problems.push(`location is "${code.location}", the bank's charge is at "${want}"`);
  }
  return problems;
}

function withoutScheme(url: string): string {
  return url.replace(/^https?:\/\//i, '');
}

function isUrlWithoutScheme(location: string): boolean {
  try {
    const url = new URL(`https://${location}`);
    return url.hostname.length > 0 && url.pathname.length > 1;
  } catch {
    return false;
  }
}

/** A decoded raster image as PDF.js gives one (unpdf's extractImages): 1 (grey), 3 (RGB) or 4 (RGBA) channels. */
export interface RawImage {
  data: Uint8ClampedArray;
  width: number;
  height: number;
  channels: number;
}

/** The text of the QR code in a raw image (e.g. one drawn into a PDF), or null when it holds none. */
export function decodeQrPixels(image: RawImage): string | null {
  const { data, width, height, channels } = image;
  const rgba = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i += 1) {
    const at = i * channels;
    const [r, g, b] = channels >= 3 ? [data[at], data[at + 1], data[at + 2]] : [data[at], data[at], data[at]];
    rgba.set([r, g, b, channels === 4 ? data[at + 3] : 255], i * 4);
  }
  return jsQR(rgba, width, height)?.data ?? null;
}

/**
 * The text of every QR code drawn into a PDF as an image, page by page: what a phone's camera reads
 * off the printout (a booklet's PIX codes).
 */
export async function qrCodesInPdf(bytes: Uint8Array): Promise<string[][]> {
  provideTransferToFixedLength();
  // pdf-text loads PDF.js the way jest's CommonJS runtime can: through it first.
  const pageCount = await pdfPageCount(bytes);
  const { OPS } = await getResolvedPDFJS();
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const pages: string[][] = [];
    for (let number = 1; number <= pageCount; number += 1) {
      const page = await pdf.getPage(number);
      const operators = await page.getOperatorList();
      const found: string[] = [];
      for (const [i, op] of operators.fnArray.entries()) {
        if (op !== OPS.paintImageXObject) continue;
        const key = (operators.argsArray[i] as [string])[0];
        const store = (key.startsWith('g_') ? page.commonObjs : page.objs) as unknown as PdfObjects;
        const image = await new Promise<PdfImage | null>((resolve) => store.get(key, resolve));
        const raw = image ? rawImageOf(image) : null;
        const text = raw ? decodeQrPixels(raw) : null;
        if (text !== null) found.push(text);
      }
      pages.push(found);
    }
    return pages;
  } finally {
    await pdf.loadingTask.destroy();
  }
}

/** PDF.js's store of a page's decoded objects. */
interface PdfObjects {
  get(key: string, callback: (value: PdfImage | null) => void): void;
}

/** A decoded image as PDF.js keeps it: `kind` 1 packed 1-bit grey rows, 2 RGB, 3 RGBA. */
interface PdfImage {
  width: number;
  height: number;
  kind?: number;
  data?: Uint8ClampedArray | Uint8Array;
}

/**
 * The image as grey pixels inside a white quiet zone of 4 modules' worth: PDF.js keeps a QR code
 * drawn without margin (the page around it is white) as packed bits, one bit a pixel, 1 white.
 */
function rawImageOf(image: PdfImage): RawImage | null {
  const { width, height, data } = image;
  if (!data || width < 21 || height < 21) return null;
  const margin = Math.ceil(width / 10);
  const [w, h] = [width + 2 * margin, height + 2 * margin];
  const grey = new Uint8ClampedArray(w * h).fill(255);
  const rowBytes = Math.ceil(width / 8);
  for (let y = 0; y < height; y += 1)
    for (let x = 0; x < width; x += 1) grey[(y + margin) * w + x + margin] = pixelOf(image, data, x, y, rowBytes);
  return { data: grey, width: w, height: h, channels: 1 };
}

function pixelOf(image: PdfImage, data: Uint8ClampedArray | Uint8Array, x: number, y: number, rowBytes: number) {
  const at = y * image.width + x;
  if (image.kind === 1) return (data[y * rowBytes + (x >> 3)] >> (7 - (x & 7))) & 1 ? 255 : 0;
  const channels = image.kind === 3 ? 4 : 3;
  return Math.round((data[at * channels] + data[at * channels + 1] + data[at * channels + 2]) / 3);
}

/**
 * PDF.js (in unpdf 1.8) lists a page's images only after compiling its fonts, which calls the ES2024
 * ArrayBuffer.prototype.transferToFixedLength; Node 20 lacks it, and every page with text would then
 * show no image. A copy of the first `length` bytes does what PDF.js needs of it.
 */
function provideTransferToFixedLength(): void {
  if ('transferToFixedLength' in ArrayBuffer.prototype) return;
  Object.defineProperty(ArrayBuffer.prototype, 'transferToFixedLength', {
    configurable: true,
    writable: true,
    value(this: ArrayBuffer, length: number = this.byteLength): ArrayBuffer {
      const copy = new ArrayBuffer(length);
      new Uint8Array(copy).set(new Uint8Array(this, 0, Math.min(length, this.byteLength)));
      return copy;
    },
  });
}
