import { formatBrazilianDate, formatReais } from '@payments/br-format';
import type { BookletDocument, BookletInstallment } from './booklet-document';
import {
  CUT_X,
  INK,
  LABEL,
  MARGIN_X,
  MM,
  PAGE_TOP,
  PAGE_WIDTH,
  PART_HEIGHT,
  STUB_WIDTH,
  STUB_X,
} from './booklet-layout';
import { drawSlipFigures, drawSlipHeader, drawSlipParties } from './booklet-slip';
import { drawBarcodeAndPix, drawPaid, drawPixOnly } from './booklet-slip-payment';
import { field } from './booklet-text';

/** The installment pages: up to three parts a page, each a stub the payer keeps and the slip, cut apart. */

/** The dashed lines a payer cuts along: between parts, and between each stub and its slip. */
export function drawCutMarks(pdf: PDFKit.PDFDocument, parts: number): void {
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
export interface PartFigures {
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
export function drawPart(
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

/** "PAGO em 05/12/2026"; "PAGO" when the payment day is not known. */
function paidMark(paidOn: string | null): string {
  return paidOn ? `PAGO em ${formatBrazilianDate(paidOn)}` : 'PAGO';
}
