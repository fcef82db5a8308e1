import { formatBrazilianDate, formatReais, formatTypeableLine } from '@payments/br-format';
import { drawItf, ITF_BAR_HEIGHT, qrCodePng } from '@payments/slip-images';
import { formatTaxId } from '@payments/tax-id';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import PDFDocument from 'pdfkit';
import type { BookletDocument, BookletInstallment, BookletParty } from './booklet-document';

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

/** Installment parts per A4 page. */
export const PARTS_PER_PAGE = 3;

/** Pages of a booklet with n installments: the cover, then three installments a page. */
export function bookletPageCount(installments: number): number {
  return 1 + Math.ceil(installments / PARTS_PER_PAGE);
}

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

// ---------------------------------------------------------------------------------------------------
// Geometry (PDF points; 1 mm = 72 / 25.4 pt). A4 is 210 x 297 mm.

const MM = 72 / 25.4;
const PAGE_WIDTH = 595.28;
const PAGE_HEIGHT = 841.89;
const MARGIN_X = 8 * MM;
const PAGE_TOP = 8 * MM;
const PART_HEIGHT = (PAGE_HEIGHT - 2 * PAGE_TOP) / PARTS_PER_PAGE;

const STUB_X = MARGIN_X;
const STUB_WIDTH = 40 * MM;
const CUT_X = MARGIN_X + 43 * MM;
const MAIN_X = MARGIN_X + 46 * MM;
const MAIN_RIGHT = PAGE_WIDTH - MARGIN_X;
const RIGHT_COLUMN_WIDTH = 40 * MM;
const RIGHT_X = MAIN_RIGHT - RIGHT_COLUMN_WIDTH;
const LEFT_WIDTH = RIGHT_X - MAIN_X;

const QR_SIZE = 28 * MM;
const QR_SIZE_PIX_ONLY = 33 * MM;

const INK = '#000000';
const LABEL = '#555555';
const RULE = 0.5;
const PAD = 1.2 * MM;

// ---------------------------------------------------------------------------------------------------
// Cover

const COVER_MARGIN = 15 * MM;
const SCHEDULE_ROWS = 15;
const SCHEDULE_COLUMNS = 3;

/**
 * The cover: title and reference, payee and payer side by side, a summary band, the schedule of
 * installments, how to pay, and a footer. Each section below takes the y where it starts and returns
 * the y where the next one starts.
 */
function drawCover(pdf: PDFKit.PDFDocument, doc: BookletDocument): void {
  const left = COVER_MARGIN;
  const width = PAGE_WIDTH - 2 * COVER_MARGIN;
  const installments = doc.installments;
  const totalCents = sumCents(installments);
  let y = COVER_MARGIN;

  y = drawCoverTitle(pdf, doc.paymentSlipId, left, width, y);
  // Payee and payer, side by side.
  const half = (width - 10) / 2;
  const partyHeight = 30 * MM;
  drawParty(pdf, 'Beneficiário (quem recebe)', doc.payee, left, y, half, partyHeight);
  drawParty(pdf, 'Pagador (quem paga)', doc.payer, left + half + 10, y, half, partyHeight);
  y += partyHeight + 10;
  y = drawSummaryBand(pdf, installments, left, width, y);
  y = drawSchedule(pdf, installments, left, width, y);
  drawHowToPay(
    pdf,
    installments.some((i) => i.paid),
    left,
    width,
    y,
  );

  pdf.font('Helvetica').fontSize(7.5).fillColor(LABEL);
  const footer = `${installments.length} parcela(s) - ${formatReais(totalCents)} - carnê ${doc.paymentSlipId}`;
  pdf.text(fit(pdf, footer, width), left, PAGE_HEIGHT - COVER_MARGIN - 8, { lineBreak: false });
}

function drawCoverTitle(
  pdf: PDFKit.PDFDocument,
  paymentSlipId: string,
  left: number,
  width: number,
  y: number,
): number {
  pdf.fillColor(INK).font('Helvetica-Bold').fontSize(24).text('Carnê de pagamento', left, y, { lineBreak: false });
  pdf.font('Helvetica').fontSize(9).fillColor(LABEL);
  const reference = fit(pdf, `Referência do carnê: ${paymentSlipId}`, width);
  pdf.text(reference, left, y + 30, { lineBreak: false });
  y += 46;
  pdf
    .moveTo(left, y)
    .lineTo(left + width, y)
    .lineWidth(1.5)
    .strokeColor(INK)
    .stroke();
  return y + 10;
}

/**
 * A grey band of cells: how many installments, the total, the first and the last due date; when some
 * are paid, how many, and the paid and the open amounts too.
 */
function drawSummaryBand(
  pdf: PDFKit.PDFDocument,
  installments: BookletInstallment[],
  left: number,
  width: number,
  y: number,
): number {
  const paid = installments.filter((i) => i.paid);
  const open = installments.filter((i) => !i.paid);
  const amounts: Array<[string, string]> =
    paid.length === 0
      ? [['Valor total', formatReais(sumCents(installments))]]
      : [
          ['Valor total', formatReais(sumCents(installments))],
          ['Valor pago', formatReais(sumCents(paid))],
          ['Valor em aberto', formatReais(sumCents(open))],
        ];
  const cells: Array<[string, string]> = [
    [
      'Número de parcelas',
      paid.length === 0 ? String(installments.length) : `${installments.length} (${paid.length} paga(s))`,
    ],
    ...amounts,
    ['Primeiro vencimento', installments.length > 0 ? formatBrazilianDate(installments[0].dueDate) : '-'],
    [
      'Último vencimento',
      installments.length > 0 ? formatBrazilianDate(installments[installments.length - 1].dueDate) : '-',
    ],
  ];
  const cellWidth = width / cells.length;
  const bandHeight = 16 * MM;
  pdf.rect(left, y, width, bandHeight).fillColor('#f0f0f0').fill();
  cells.forEach(([label, value], index) => {
    const x = left + index * cellWidth;
    if (index > 0)
      pdf
        .moveTo(x, y)
        .lineTo(x, y + bandHeight)
        .lineWidth(RULE)
        .strokeColor('#bbbbbb')
        .stroke();
    pdf.font('Helvetica').fillColor(LABEL);
    shrinkToFit(pdf, label, cellWidth - 16, 7.5, 5.5);
    pdf.text(label, x + 8, y + 8, { lineBreak: false });
    pdf.font('Helvetica-Bold').fillColor(INK);
    shrinkToFit(pdf, value, cellWidth - 16, 14);
    pdf.text(value, x + 8, y + 21, { lineBreak: false });
  });
  return y + bandHeight + 16;
}

/** Every installment when they fit in three columns of fifteen; otherwise a line saying where they are. */
function drawSchedule(
  pdf: PDFKit.PDFDocument,
  installments: BookletInstallment[],
  left: number,
  width: number,
  y: number,
): number {
  pdf.font('Helvetica-Bold').fontSize(12).fillColor(INK).text('Parcelas', left, y, { lineBreak: false });
  y += 18;
  if (installments.length === 0 || installments.length > SCHEDULE_ROWS * SCHEDULE_COLUMNS) {
    const paid = installments.filter((i) => i.paid).length;
    const paidNote = paid > 0 ? ` ${paid} delas já foram pagas e estão marcadas "PAGO".` : '';
    pdf.font('Helvetica').fontSize(9.5).fillColor(INK);
    pdf.text(
      `As ${installments.length} parcelas estão nas páginas seguintes, três por página, em ordem de vencimento.${paidNote}`,
      left,
      y,
      { width, lineGap: 1.5 },
    );
    return pdf.y + 12;
  }
  const columnWidth = width / SCHEDULE_COLUMNS;
  const rowHeight = 5.2 * MM;
  const columns = Math.ceil(installments.length / SCHEDULE_ROWS);
  for (let c = 0; c < columns; c += 1) {
    const x = left + c * columnWidth;
    pdf.font('Helvetica').fontSize(7).fillColor(LABEL);
    pdf.text('Parcela', x, y, { lineBreak: false });
    pdf.text('Vencimento', x + 40, y, { lineBreak: false });
    rightText(pdf, 'Valor', x + columnWidth - 14, y);
    pdf
      .moveTo(x, y + 10)
      .lineTo(x + columnWidth - 10, y + 10)
      .lineWidth(RULE)
      .strokeColor('#999999')
      .stroke();
  }
  installments.forEach((installment, index) => {
    const x = left + Math.floor(index / SCHEDULE_ROWS) * columnWidth;
    const rowY = y + 14 + (index % SCHEDULE_ROWS) * rowHeight;
    // A paid row is greyed and tagged PAGO (its date is on its part); an open PIX-only one is tagged PIX.
    pdf
      .font('Helvetica')
      .fontSize(9)
      .fillColor(installment.paid ? LABEL : INK);
    pdf.text(`${installment.number}/${installments.length}`, x, rowY, { lineBreak: false });
    pdf.text(formatBrazilianDate(installment.dueDate), x + 40, rowY, { lineBreak: false });
    const amount = formatReais(installment.amountCents);
    shrinkToFit(pdf, amount, columnWidth - 14 - 92, 9); // the date ends near x + 90
    rightText(pdf, amount, x + columnWidth - 14, rowY);
    if (installment.paid)
      pdf
        .font('Helvetica-Bold')
        .fontSize(5.5)
        .fillColor(INK)
        .text('PAGO', x + 24.5, rowY + 2.5, { lineBreak: false });
    else if (!installment.barcode)
      pdf
        .font('Helvetica')
        .fontSize(5.5)
        .fillColor(LABEL)
        .text('PIX', x + 26, rowY + 2.5, { lineBreak: false });
  });
  return y + 14 + Math.min(installments.length, SCHEDULE_ROWS) * rowHeight + 12;
}

const HOW_TO_PAY = [
  'Pague cada parcela até a data de vencimento impressa nela. Destaque a parte da parcela na linha pontilhada; o canhoto da esquerda fica com você como comprovante.',
  'Boleto: pague no aplicativo ou internet banking do seu banco, em agências, caixas eletrônicos ou lotéricas, lendo o código de barras ou digitando a linha digitável.',
  'PIX: no aplicativo do seu banco, escolha pagar com PIX e leia o QR code da parcela, ou use o código "PIX copia e cola" impresso ao lado dele. A confirmação é imediata.',
  'Após o vencimento podem ser cobrados multa e juros, conforme as instruções de cada parcela. Em caso de dúvida, fale com o beneficiário.',
];

const PAID_STEP =
  'Parcelas marcadas "PAGO" já foram pagas, na data impressa nelas: não há nada a pagar nelas, e por isso não trazem código de barras nem PIX.';

function drawHowToPay(pdf: PDFKit.PDFDocument, somePaid: boolean, left: number, width: number, y: number): number {
  pdf.font('Helvetica-Bold').fontSize(12).fillColor(INK).text('Como pagar', left, y, { lineBreak: false });
  y += 18;
  pdf.font('Helvetica').fontSize(9.5).fillColor(INK);
  const steps = somePaid ? [...HOW_TO_PAY, PAID_STEP] : HOW_TO_PAY;
  for (const [index, step] of steps.entries()) {
    pdf.text(`${index + 1}.`, left, y, { lineBreak: false });
    pdf.text(step, left + 14, y, { width: width - 14, lineGap: 1.5 });
    y = pdf.y + 6;
  }
  return y;
}

function drawParty(
  pdf: PDFKit.PDFDocument,
  label: string,
  party: BookletParty,
  x: number,
  y: number,
  width: number,
  height: number,
): void {
  pdf.rect(x, y, width, height).lineWidth(RULE).strokeColor('#999999').stroke();
  const inner = width - 16;
  pdf
    .font('Helvetica')
    .fontSize(7.5)
    .fillColor(LABEL)
    .text(label, x + 8, y + 7, { lineBreak: false });
  pdf
    .font('Helvetica-Bold')
    .fontSize(11)
    .fillColor(INK)
    .text(fit(pdf, party.name, inner), x + 8, y + 19, { lineBreak: false });
  let lineY = y + 35;
  pdf.font('Helvetica').fontSize(8.5);
  const lines = [...(party.taxId ? [`CPF/CNPJ: ${formatTaxId(party.taxId)}`] : []), ...party.address];
  for (const line of lines.slice(0, 4)) {
    pdf.text(fit(pdf, line, inner), x + 8, lineY, { lineBreak: false });
    lineY += 11;
  }
}

// ---------------------------------------------------------------------------------------------------
// Installment pages

/** The dashed lines a payer cuts along: between parts, and between each stub and its slip. */
function drawCutMarks(pdf: PDFKit.PDFDocument, parts: number): void {
  pdf.save().lineWidth(0.6).strokeColor('#777777').dash(3, { space: 2.5 });
  for (let slot = 0; slot < parts; slot += 1) {
    const top = PAGE_TOP + slot * PART_HEIGHT;
    if (slot > 0)
      pdf
        .moveTo(MARGIN_X - 4 * MM, top)
        .lineTo(PAGE_WIDTH - MARGIN_X + 4 * MM, top)
        .stroke();
    pdf
      .moveTo(CUT_X, top + 2 * MM)
      .lineTo(CUT_X, top + PART_HEIGHT - 2 * MM)
      .stroke();
  }
  pdf.undash().restore();
}

/** What a part prints about its installment, in the stub and again in the slip. */
interface PartFigures {
  /** "3/12" */
  position: string;
  /** "Parcela 3/12" */
  label: string;
  due: string;
  value: string;
  ourNumber: string;
  /** "PAGO em 05/12/2026" for a paid installment; null for one to be paid. */
  paid: string | null;
  /** The payment day (dd/mm/aaaa) of a paid installment; '' otherwise. */
  paidOn: string;
}

/**
 * One installment part, `top` being the top of its third of the page: the stub on the left, then the
 * slip: header, the grid of figures (right) and parties and instructions (left), and under the grid the
 * barcode and PIX (hybrid) or PIX alone.
 */
function drawPart(
  pdf: PDFKit.PDFDocument,
  doc: BookletDocument,
  installment: BookletInstallment,
  total: number,
  top: number,
  qr: Buffer | null,
): void {
  const position = `${installment.number}/${total}`;
  const figures: PartFigures = {
    position,
    label: `Parcela ${position}`,
    due: formatBrazilianDate(installment.dueDate),
    value: formatReais(installment.amountCents),
    ourNumber: installment.ourNumber || '-',
    paid: installment.paid ? paidMark(installment.paid.on) : null,
    paidOn: installment.paid?.on ? formatBrazilianDate(installment.paid.on) : '',
  };
  const y0 = top + 2.5 * MM;
  const gridTop = y0 + 8 * MM;
  const gridBottom = y0 + 51 * MM;
  const partBottom = top + PART_HEIGHT - 2 * MM;

  drawStub(pdf, doc, figures, y0);
  drawSlipHeader(pdf, figures, installment.typeableLine, y0);
  drawSlipFigures(pdf, figures, gridTop, gridBottom);
  drawSlipParties(pdf, doc, installment.instructions, gridTop, gridBottom);
  if (figures.paid !== null) {
    drawPaid(pdf, figures.paid, gridBottom, partBottom);
  } else if (installment.barcode !== null) {
    drawBarcodeAndPix(pdf, installment.barcode, installment.pixCopyAndPaste, qr, gridBottom, partBottom);
  } else {
    drawPixOnly(pdf, installment.pixCopyAndPaste, qr, gridBottom, partBottom);
  }
}

/** The stub (canhoto) the payer keeps: the installment's figures and room for the cashier's stamp. */
function drawStub(pdf: PDFKit.PDFDocument, doc: BookletDocument, figures: PartFigures, y0: number): void {
  pdf
    .font('Helvetica-Bold')
    .fontSize(10)
    .fillColor(INK)
    .text(figures.label, STUB_X, y0 + 4, { lineBreak: false });
  pdf
    .moveTo(STUB_X, y0 + 7.5 * MM)
    .lineTo(STUB_X + STUB_WIDTH, y0 + 7.5 * MM)
    .lineWidth(1.2)
    .strokeColor(INK)
    .stroke();
  const stubRow = 8 * MM;
  const stubFields: Array<[string, string]> = [
    ['Vencimento', figures.due],
    ['Valor do documento', figures.value],
    ['Nosso número', figures.ourNumber],
    ['Beneficiário', doc.payee.name],
    ['Pagador', doc.payer.name],
    ['(=) Valor pago', ''],
    ['Data do pagamento', figures.paidOn],
  ];
  stubFields.forEach(([fieldLabel, fieldValue], index) =>
    field(pdf, fieldLabel, fieldValue, STUB_X, y0 + 8 * MM + index * stubRow, STUB_WIDTH, stubRow),
  );
  const stubBottom = y0 + 8 * MM + stubFields.length * stubRow;
  pdf
    .font('Helvetica-Bold')
    .fontSize(6.5)
    .fillColor(INK)
    .text('Recibo do pagador', STUB_X, stubBottom + 4, { lineBreak: false });
  pdf
    .font('Helvetica')
    .fontSize(5.5)
    .fillColor(LABEL)
    .text('Autenticação mecânica', STUB_X, stubBottom + 13, { lineBreak: false });
}

/**
 * The slip's header: the installment, then flush right "PAGO em <date>" for a paid one, else the
 * typeable line (or "Pagamento via PIX").
 */
function drawSlipHeader(pdf: PDFKit.PDFDocument, figures: PartFigures, typeableLine: string | null, y0: number): void {
  pdf
    .font('Helvetica-Bold')
    .fontSize(10)
    .fillColor(INK)
    .text(figures.label, MAIN_X, y0 + 4, { lineBreak: false });
  if (figures.paid !== null) {
    pdf.font('Helvetica-Bold').fontSize(10).fillColor(INK);
    rightText(pdf, figures.paid, MAIN_RIGHT, y0 + 4);
  } else if (typeableLine) {
    pdf.font('Courier-Bold').fontSize(9.5).fillColor(INK);
    rightText(pdf, formatTypeableLine(typeableLine), MAIN_RIGHT, y0 + 5);
  } else {
    pdf.font('Helvetica-Bold').fontSize(10).fillColor(INK);
    rightText(pdf, 'Pagamento via PIX', MAIN_RIGHT, y0 + 4);
  }
  pdf
    .moveTo(MAIN_X, y0 + 7.5 * MM)
    .lineTo(MAIN_RIGHT, y0 + 7.5 * MM)
    .lineWidth(1.2)
    .strokeColor(INK)
    .stroke();
}

/** The grid's right column: the figures a cashier looks for. */
function drawSlipFigures(pdf: PDFKit.PDFDocument, figures: PartFigures, gridTop: number, gridBottom: number): void {
  const rightFields: Array<[string, string]> = [
    ['Vencimento', figures.due],
    ['Valor do documento', figures.value],
    ['Nosso número', figures.ourNumber],
    ['Parcela', figures.position],
    ['(=) Valor cobrado', ''],
  ];
  const rightRow = (gridBottom - gridTop) / rightFields.length;
  rightFields.forEach(([fieldLabel, fieldValue], index) =>
    field(pdf, fieldLabel, fieldValue, RIGHT_X, gridTop + index * rightRow, RIGHT_COLUMN_WIDTH, rightRow, {
      align: 'right',
      size: index < 2 ? 9.5 : 8,
    }),
  );
}

/** The grid's left column: payee, payer (with the address), and the instructions filling the rest. */
function drawSlipParties(
  pdf: PDFKit.PDFDocument,
  doc: BookletDocument,
  instructionLines: string[],
  gridTop: number,
  gridBottom: number,
): void {
  const payeeHeight = 8 * MM;
  const payerHeight = 11 * MM;
  field(pdf, 'Beneficiário', partyLine(doc.payee), MAIN_X, gridTop, LEFT_WIDTH, payeeHeight);
  const payerTop = gridTop + payeeHeight;
  field(pdf, 'Pagador', partyLine(doc.payer), MAIN_X, payerTop, LEFT_WIDTH, payerHeight);
  if (doc.payer.address.length > 0) {
    pdf
      .font('Helvetica')
      .fontSize(6.5)
      .fillColor(INK)
      .text(fit(pdf, doc.payer.address.join(' - '), LEFT_WIDTH - 2 * PAD), MAIN_X + PAD, payerTop + 20, {
        lineBreak: false,
      });
  }
  const instructionsTop = payerTop + payerHeight;
  pdf
    .rect(MAIN_X, instructionsTop, LEFT_WIDTH, gridBottom - instructionsTop)
    .lineWidth(RULE)
    .strokeColor(INK)
    .stroke();
  pdf
    .font('Helvetica')
    .fontSize(5.5)
    .fillColor(LABEL)
    .text('Instruções (texto de responsabilidade do beneficiário)', MAIN_X + PAD, instructionsTop + 2.5, {
      lineBreak: false,
    });
  const instructions = instructionLines.length > 0 ? instructionLines : ['Não receber após 60 dias do vencimento.'];
  pdf.font('Helvetica').fontSize(7).fillColor(INK);
  pdf.text(instructions.join('\n'), MAIN_X + PAD, instructionsTop + 11, {
    width: LEFT_WIDTH - 2 * PAD,
    height: gridBottom - instructionsTop - 13,
    lineGap: 0.6,
    ellipsis: true,
  });
}

/** Under a paid slip's grid, in place of the barcode and PIX: the paid mark, large, and what it means. */
function drawPaid(pdf: PDFKit.PDFDocument, mark: string, gridBottom: number, partBottom: number): void {
  const top = gridBottom + 3 * MM;
  const height = Math.min(22 * MM, partBottom - top);
  const width = MAIN_RIGHT - MAIN_X;
  pdf.rect(MAIN_X, top, width, height).lineWidth(1.5).strokeColor(INK).stroke();
  pdf.font('Helvetica-Bold').fontSize(20).fillColor(INK);
  centerText(pdf, mark, MAIN_X + width / 2, top + 4 * MM);
  pdf.font('Helvetica').fontSize(8).fillColor(INK);
  centerText(
    pdf,
    'Esta parcela já foi paga: não há nada a pagar nela, e por isso não traz código de barras nem PIX.',
    MAIN_X + width / 2,
    top + 13 * MM,
  );
}

/** Under a hybrid slip's grid: the barcode, the PIX copy-and-paste text under it, the QR code on the right. */
function drawBarcodeAndPix(
  pdf: PDFKit.PDFDocument,
  barcode: string,
  pixCopyAndPaste: string,
  qr: Buffer | null,
  gridBottom: number,
  partBottom: number,
): void {
  pdf
    .font('Helvetica')
    .fontSize(5.5)
    .fillColor(LABEL)
    .text('Ficha de compensação', MAIN_X, gridBottom + 3, { lineBreak: false });
  pdf.text('Autenticação mecânica', MAIN_X + LEFT_WIDTH - 60, gridBottom + 3, { lineBreak: false });
  drawItf(pdf, barcode, MAIN_X + 3 * MM, gridBottom + 4 * MM);
  const textTop = gridBottom + 4 * MM + ITF_BAR_HEIGHT + 2.5 * MM;
  if (pixCopyAndPaste) {
    pdf
      .font('Helvetica')
      .fontSize(5.5)
      .fillColor(LABEL)
      .text('PIX copia e cola', MAIN_X, textTop, { lineBreak: false });
    monoBlock(pdf, pixCopyAndPaste, MAIN_X, textTop + 7, LEFT_WIDTH - 2 * MM, partBottom - (textTop + 7), 5.5, 4);
  }
  if (qr) {
    const qrX = RIGHT_X + (RIGHT_COLUMN_WIDTH - QR_SIZE) / 2;
    pdf.font('Helvetica-Bold').fontSize(6.5).fillColor(INK);
    centerText(pdf, 'Pague também com PIX', RIGHT_X + RIGHT_COLUMN_WIDTH / 2, gridBottom + 3);
    pdf.image(qr, qrX, gridBottom + 4 * MM, { width: QR_SIZE, height: QR_SIZE });
  }
}

/** Under a PIX-only slip's grid: how to pay, the copy-and-paste text and a larger QR code in the barcode's place. */
function drawPixOnly(
  pdf: PDFKit.PDFDocument,
  pixCopyAndPaste: string,
  qr: Buffer | null,
  gridBottom: number,
  partBottom: number,
): void {
  const blockTop = gridBottom + 3;
  const textWidth = LEFT_WIDTH - 4 * MM;
  pdf
    .font('Helvetica-Bold')
    .fontSize(11)
    .fillColor(INK)
    .text('Pague com PIX', MAIN_X, blockTop + 2, { lineBreak: false });
  pdf
    .font('Helvetica')
    .fontSize(7)
    .fillColor(INK)
    .text(
      'Abra o aplicativo do seu banco, escolha pagar com PIX e leia o QR code ao lado, ou copie o código abaixo (PIX copia e cola). Esta parcela não tem boleto.',
      MAIN_X,
      blockTop + 17,
      { width: textWidth, height: 20, lineGap: 0.5 },
    );
  const codeTop = blockTop + 41;
  if (pixCopyAndPaste) {
    pdf
      .font('Helvetica')
      .fontSize(5.5)
      .fillColor(LABEL)
      .text('PIX copia e cola', MAIN_X, codeTop, { lineBreak: false });
    monoBlock(pdf, pixCopyAndPaste, MAIN_X, codeTop + 8, textWidth, partBottom - (codeTop + 8), 7.5, 4.5);
  } else {
    pdf
      .font('Helvetica-Bold')
      .fontSize(8)
      .fillColor(INK)
      .text('Código PIX indisponível: fale com o beneficiário.', MAIN_X, codeTop, { lineBreak: false });
  }
  if (qr)
    pdf.image(qr, RIGHT_X + (RIGHT_COLUMN_WIDTH - QR_SIZE_PIX_ONLY) / 2, gridBottom + 3 * MM, {
      width: QR_SIZE_PIX_ONLY,
      height: QR_SIZE_PIX_ONLY,
    });
}

/** A labelled box: small grey label at the top, the value in bold under it (cut with an ellipsis to fit). */
function field(
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

/** "PAGO em 05/12/2026"; "PAGO" when the payment day is not known. */
function paidMark(paidOn: string | null): string {
  return paidOn ? `PAGO em ${formatBrazilianDate(paidOn)}` : 'PAGO';
}

function sumCents(installments: readonly BookletInstallment[]): number {
  return installments.reduce((sum, i) => sum + i.amountCents, 0);
}

function partyLine(party: BookletParty): string {
  return party.taxId ? `${party.name} - CPF/CNPJ ${formatTaxId(party.taxId)}` : party.name;
}

/** The text cut (with an ellipsis) to fit `width` in the current font. */
function fit(pdf: PDFKit.PDFDocument, text: string, width: number): string {
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
function shrinkToFit(pdf: PDFKit.PDFDocument, text: string, width: number, size: number, min = 6): void {
  pdf.fontSize(size);
  const natural = pdf.widthOfString(text);
  if (natural > width) pdf.fontSize(Math.max(min, Math.floor(((size * width) / natural) * 4) / 4));
}

function rightText(pdf: PDFKit.PDFDocument, text: string, right: number, y: number): void {
  pdf.text(text, right - pdf.widthOfString(text), y, { lineBreak: false });
}

function centerText(pdf: PDFKit.PDFDocument, text: string, center: number, y: number): void {
  pdf.text(text, center - pdf.widthOfString(text) / 2, y, { lineBreak: false });
}

/**
 * A long unbroken code (PIX copy-and-paste) in Courier, broken every n characters: the largest size from
 * `maxSize` down to `minSize` whose lines fit `height`; at `minSize` it runs on regardless (never cut: a
 * cut code cannot be paid).
 */
function monoBlock(
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
