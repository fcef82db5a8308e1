import { qrCodePng } from '@payments/slip-images';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import PDFDocument from 'pdfkit';
import { drawCover } from './booklet-cover';
import type { BookletDocument, BookletInstallment } from './booklet-document';
import { bookletPageCount, PAGE_TOP, PART_HEIGHT, PARTS_PER_PAGE } from './booklet-layout';
import { drawCutMarks, drawPart } from './booklet-part';

/**
 * The booklet (carnê) as an A4 PDF: a cover page, then three installment parts per page. Each part is a
 * narrow stub (canhoto) the payer keeps, a dashed cut line, and the slip itself (ficha de compensação):
 * payee, payer, due date, value, our number, instructions, typeable line, ITF barcode, PIX QR code and
 * copy-and-paste text. PIX-only installments (no barcode) get a larger QR code and copy-and-paste text.
 * A paid installment keeps its figures but prints "PAGO em <date>" where its payment data would be.
 *
 * Rendering streams: pdfkit writes each page out when the next one starts (bufferPages off), QR images
 * are made one part at a time, and the loop waits while `out` pushes back, so memory stays flat in the
 * number of installments.
 */

/**
 * Renders the booklet into `out` and resolves once `out` has taken every byte (it is ended), with the
 * number of pages (= bookletPageCount). `out` must be consumed while this runs: the renderer waits when
 * `out` pushes back. A document that cannot be printed (a barcode that is not 44 digits, a typeable line
 * that is not 47) is rejected before anything is written; a failure while rendering destroys `out`.
 */
export async function renderBooklet(doc: BookletDocument, out: NodeJS.WritableStream): Promise<{ pageCount: number }> {
  doc.installments.forEach(validateInstallment);

  const pdf = new PDFDocument({
    autoFirstPage: false,
    bufferPages: false,
    compress: true,
    size: 'A4',
    margin: 0,
    info: {
      Title: `Carnê de pagamento ${doc.paymentSlipId}`,
      Author: doc.payee.name,
      Subject: `${doc.installments.length} parcelas`,
    },
  });
  let pageCount = 0;
  pdf.on('pageAdded', () => (pageCount += 1));
  const written = pipeline(pdf, out);
  // Seen through `written`; this only keeps an early failure from counting as unhandled.
  written.catch(() => undefined);

  try {
    pdf.addPage({ size: 'A4', margin: 0 });
    drawCover(pdf, doc);
    const total = doc.installments.length;
    for (let i = 0; i < total; i += 1) {
      const slot = i % PARTS_PER_PAGE;
      if (slot === 0) {
        pdf.addPage({ size: 'A4', margin: 0 });
        drawCutMarks(pdf, Math.min(PARTS_PER_PAGE, total - i));
      }
      const installment = doc.installments[i];
      // One QR image at a time: made, embedded (written out with the page), dropped. None for a paid one.
      const qr = installment.pixCopyAndPaste && !installment.paid ? qrCodePng(installment.pixCopyAndPaste) : null;
      drawPart(pdf, doc, installment, total, PAGE_TOP + slot * PART_HEIGHT, qr);
      if (slot === PARTS_PER_PAGE - 1) {
        // A page done (~30 ms of work): let I/O run, and wait while `out` pushes back. This yield is what
        // lets the bus's in-progress heartbeats out during a long build: without it a
        // 1,000-installment build held the event loop for 15 s, with it the longest stall is under 0.5 s.
        await new Promise(setImmediate);
        await drained(pdf);
        if (pdf.destroyed) break;
      }
    }
    if (!pdf.destroyed) pdf.end();
  } catch (err) {
    pdf.destroy(err as Error);
  }
  await written;
  if (pageCount !== bookletPageCount(doc.installments.length)) {
    throw new Error(
      `booklet layout produced ${pageCount} pages, expected ${bookletPageCount(doc.installments.length)}`,
    );
  }
  return { pageCount };
}

function validateInstallment(installment: BookletInstallment): void {
  const which = `installment ${installment.number}`;
  if (installment.barcode !== null && !/^\d{44}$/.test(installment.barcode))
    throw new RangeError(`${which}: a slip barcode has 44 digits, got "${installment.barcode}"`);
  if (installment.typeableLine !== null && !/^\d{47}$/.test(installment.typeableLine)) {
    throw new RangeError(`${which}: a typeable line has 47 digits, got "${installment.typeableLine}"`);
  }
  if (!Number.isSafeInteger(installment.amountCents))
    throw new RangeError(`${which}: amount in cents must be an integer`);
}

/** pdfkit pushes without regard to back-pressure; while its buffer is large, wait until the pipe drains it. */
async function drained(pdf: PDFKit.PDFDocument): Promise<void> {
  while (pdf.readableLength > HIGH_WATER_MARK && !pdf.destroyed) {
    await Promise.race([once(pdf, 'data'), once(pdf, 'close')]);
  }
}

const HIGH_WATER_MARK = 1024 * 1024;
