import { formatBrazilianDate, formatReais } from '@payments/br-format';
import { formatTaxId } from '@payments/tax-id';
import type { BookletDocument, BookletInstallment, BookletParty } from './booklet-document';
import { INK, LABEL, MM, PAGE_HEIGHT, PAGE_WIDTH, RULE } from './booklet-layout';
import { drawHowToPay, drawSchedule } from './booklet-schedule';
import { fit, shrinkToFit } from './booklet-text';

const COVER_MARGIN = 15 * MM;

/**
 * The cover: title and reference, payee and payer side by side, a summary band, the schedule of
 * installments, how to pay, and a footer. Each section below takes the y where it starts and returns
 * the y where the next one starts.
 */
export function drawCover(pdf: PDFKit.PDFDocument, doc: BookletDocument): void {
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

function sumCents(installments: readonly BookletInstallment[]): number {
  return installments.reduce((sum, i) => sum + i.amountCents, 0);
}
