import { formatBrazilianDate, formatReais } from '@payments/br-format';
import type { BookletInstallment } from './booklet-document';
import { INK, LABEL, MM, RULE } from './booklet-layout';
import { rightText, shrinkToFit } from './booklet-text';

/** The cover's schedule of installments and its "how to pay" steps. */

const SCHEDULE_ROWS = 15;
const SCHEDULE_COLUMNS = 3;

/** Every installment when they fit in three columns of fifteen; otherwise a line saying where they are. */
export function drawSchedule(
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

export function drawHowToPay(
  pdf: PDFKit.PDFDocument,
  somePaid: boolean,
  left: number,
  width: number,
  y: number,
): number {
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
