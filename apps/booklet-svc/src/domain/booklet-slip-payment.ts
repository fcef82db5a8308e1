import { drawItf, ITF_BAR_HEIGHT } from '@payments/slip-images';
import {
  INK,
  LABEL,
  LEFT_WIDTH,
  MAIN_RIGHT,
  MAIN_X,
  MM,
  QR_SIZE,
  QR_SIZE_PIX_ONLY,
  RIGHT_COLUMN_WIDTH,
  RIGHT_X,
} from './booklet-layout';
import { centerText, monoBlock } from './booklet-text';

/** Under a slip's grid: how the installment is paid (barcode and PIX, PIX alone), or that it was. */

/** Under a paid slip's grid, in place of the barcode and PIX: the paid mark, large, and what it means. */
export function drawPaid(pdf: PDFKit.PDFDocument, mark: string, gridBottom: number, partBottom: number): void {
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
export function drawBarcodeAndPix(
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
export function drawPixOnly(
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
