import { formatTypeableLine } from '@payments/br-format';
import { formatTaxId } from '@payments/tax-id';
import type { BookletDocument, BookletParty } from './booklet-document';
import {
  INK,
  LABEL,
  LEFT_WIDTH,
  MAIN_RIGHT,
  MAIN_X,
  MM,
  PAD,
  RIGHT_COLUMN_WIDTH,
  RIGHT_X,
  RULE,
} from './booklet-layout';
import type { PartFigures } from './booklet-part';
import { field, fit, rightText } from './booklet-text';

/** The slip (ficha de compensação) of an installment part: its header and the grid of figures and parties. */

/**
 * The slip's header: the installment, then flush right "PAGO em <date>" for a paid one, else the
 * typeable line (or "Pagamento via PIX").
 */
export function drawSlipHeader(
  pdf: PDFKit.PDFDocument,
  figures: PartFigures,
  typeableLine: string | null,
  y0: number,
): void {
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
export function drawSlipFigures(
  pdf: PDFKit.PDFDocument,
  figures: PartFigures,
  gridTop: number,
  gridBottom: number,
): void {
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
export function drawSlipParties(
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

function partyLine(party: BookletParty): string {
  return party.taxId ? `${party.name} - CPF/CNPJ ${formatTaxId(party.taxId)}` : party.name;
}
