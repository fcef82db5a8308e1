import PDFDocument from 'pdfkit';
import type { Charge, DescriptionLine, Payer } from './charge';
import { formatBrazilianDate, formatReais, formatTypeableLine } from '@payments/br-format';
import { drawItf, ITF_BAR_HEIGHT, ITF_NARROW_MODULE } from '@payments/slip-images';
import { printedTaxId } from './beneficiary';
import { chargeQrPng } from './payment-images';
import { instructionLines } from './slip-text';

/** Who is collecting: printed in the slip's "Beneficiário" box. */
export interface PayeeDetails {
  bankCode: string;
  bankName: string;
  name: string;
  taxId: string;
  agency: string;
  wallet: string;
  account: string;
  /** Printed under the name when known. */
  address?: string | null;
}

const PAGE_MARGIN = 36;

/**
 * The charge as a one-page A4 PDF: payee, payer, due date, value, our number, instructions (discount,
 * fine, interest), description lines; for a hybrid slip the typeable line and the ITF barcode; for
 * every charge the PIX QR code and its copy-and-paste text.
 */
export async function renderChargePdf(charge: Charge, payee: PayeeDetails): Promise<Buffer> {
  const qr = chargeQrPng(charge.pixCopyAndPaste);
  const doc = new PDFDocument({
    size: 'A4',
    margin: PAGE_MARGIN,
    info: { Title: `Cobrança ${charge.ourNumber}`, Author: payee.bankName },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  // Each section draws from the y it is given across the page's width and returns where the next starts.
  const page: Column = { left: PAGE_MARGIN, width: doc.page.width - 2 * PAGE_MARGIN };
  let y = PAGE_MARGIN;
  y = drawHeader(doc, page, charge, payee, y);
  y = drawDetails(doc, page, charge, payee, y);
  y = drawInstructions(doc, page, instructionLines(charge), y);
  y = drawPayer(doc, page, charge.payer, y);
  if (charge.descriptionLines.length > 0) y = drawDescription(doc, page, charge.descriptionLines, y);
  y = drawPix(doc, page, qr, charge.pixCopyAndPaste, y);
  if (charge.barcode) drawBarcode(doc, page, charge.barcode, y);

  doc.end();
  return done;
}

interface Column {
  left: number;
  width: number;
}

/** The bank and, for a slip, the typeable line (what a payer types into a banking app), over a rule. */
function drawHeader(
  doc: PDFKit.PDFDocument,
  { left, width }: Column,
  charge: Charge,
  payee: PayeeDetails,
  y: number,
): number {
  doc.font('Helvetica-Bold').fontSize(14).text(`${payee.bankName} | ${payee.bankCode}`, left, y);
  if (charge.typeableLine) {
    doc
      .font('Courier-Bold')
      .fontSize(10.5)
      .text(formatTypeableLine(charge.typeableLine), left, y + 3, { width, align: 'right' });
  } else {
    doc
      .font('Helvetica-Bold')
      .fontSize(11)
      .text('Cobrança PIX', left, y + 2, { width, align: 'right' });
  }
  y += 24;
  doc
    .moveTo(left, y)
    .lineTo(left + width, y)
    .lineWidth(1.5)
    .stroke();
  return y + 6;
}

/** Three rows of labelled boxes: payee and due date; agency, issue date and value; our number, reference, kind. */
function drawDetails(
  doc: PDFKit.PDFDocument,
  { left, width }: Column,
  charge: Charge,
  payee: PayeeDetails,
  y: number,
): number {
  const column = width * 0.7;
  drawPayee(doc, payee, left, column, y);
  box(doc, 'Vencimento', formatBrazilianDate(charge.dueDate), left + column, width - column, y, PAYEE_HEIGHT);
  y += PAYEE_HEIGHT;
  box(doc, 'Agência / Código do beneficiário', `${payee.agency} / ${payee.account}`, left, column / 2, y);
  box(doc, 'Data do documento', formatBrazilianDate(charge.issueDate), left + column / 2, column / 2, y);
  box(doc, 'Valor do documento', formatReais(charge.amountCents), left + column, width - column, y);
  y += 30;
  box(doc, 'Carteira / Nosso número', `${payee.wallet} / ${charge.ourNumber}`, left, column / 2, y);
  box(doc, 'Referência', charge.reference ?? '-', left + column / 2, column / 2, y);
  box(
    doc,
    'Espécie',
    charge.kind === 'hybrid_slip' ? 'Boleto híbrido (boleto + PIX)' : 'PIX',
    left + column,
    width - column,
    y,
  );
  return y + 30;
}

const PAYEE_HEIGHT = 40;

/** The "Beneficiário" box: the name on its own line (a long one is cut), then its CPF/CNPJ and address. */
function drawPayee(doc: PDFKit.PDFDocument, payee: PayeeDetails, x: number, boxWidth: number, top: number): void {
  const inner = { width: boxWidth - 6, lineBreak: false, ellipsis: true };
  doc.rect(x, top, boxWidth, PAYEE_HEIGHT).lineWidth(0.5).stroke();
  doc
    .font('Helvetica')
    .fontSize(6.5)
    .text('Beneficiário', x + 3, top + 3, { width: boxWidth - 6 });
  doc
    .font('Helvetica-Bold')
    .fontSize(9)
    .text(payee.name, x + 3, top + 13, inner);
  const identity = [printedTaxId(payee.taxId), payee.address].filter((part): part is string => !!part).join(' - ');
  doc
    .font('Helvetica')
    .fontSize(8)
    .text(identity, x + 3, top + 26, inner);
}

function drawInstructions(doc: PDFKit.PDFDocument, { left, width }: Column, lines: string[], y: number): number {
  const instructionsHeight = Math.max(46, 16 + lines.length * 11);
  doc.rect(left, y, width, instructionsHeight).lineWidth(0.5).stroke();
  doc
    .font('Helvetica')
    .fontSize(6.5)
    .text('Instruções (texto de responsabilidade do beneficiário)', left + 3, y + 3);
  doc
    .font('Helvetica')
    .fontSize(8.5)
    .text(lines.length > 0 ? lines.join('\n') : '-', left + 3, y + 13, { width: width - 6 });
  return y + instructionsHeight;
}

function drawPayer(doc: PDFKit.PDFDocument, { left, width }: Column, payer: Payer, y: number): number {
  const address = [payer.address, payer.city, payer.state, payer.zipCode]
    .filter((part): part is string => !!part)
    .join(', ');
  box(doc, 'Pagador', `${payer.name} - CPF/CNPJ ${payer.taxId}${address ? `\n${address}` : ''}`, left, width, y, 40);
  return y + 48;
}

/** The charge's description lines, at most 12 (then how many more), with their prices flush right. */
function drawDescription(
  doc: PDFKit.PDFDocument,
  { left, width }: Column,
  lines: DescriptionLine[],
  y: number,
): number {
  doc.font('Helvetica-Bold').fontSize(8).text('Descrição', left, y);
  y += 11;
  doc.font('Helvetica').fontSize(8);
  for (const line of lines.slice(0, 12)) {
    doc.text(`${line.quantity} x ${line.description}`, left, y, {
      width: width - 110,
      lineBreak: false,
      ellipsis: true,
    });
    doc.text(formatReais(line.priceCents), left + width - 100, y, { width: 100, align: 'right' });
    y += 10;
  }
  if (lines.length > 12) {
    doc.text(`... e mais ${lines.length - 12} itens`, left, y);
    y += 10;
  }
  return y + 6;
}

/** The QR code and its copy-and-paste text (every charge; a hybrid slip can be paid either way). */
function drawPix(
  doc: PDFKit.PDFDocument,
  { left, width }: Column,
  qr: Buffer,
  pixCopyAndPaste: string,
  y: number,
): number {
  const qrSize = 120;
  doc.font('Helvetica-Bold').fontSize(9).text('Pague com PIX', left, y);
  doc.image(qr, left, y + 12, { width: qrSize, height: qrSize });
  doc
    .font('Helvetica')
    .fontSize(6.5)
    .text('PIX copia e cola', left + qrSize + 12, y + 14);
  doc
    .font('Courier')
    .fontSize(7)
    .text(pixCopyAndPaste, left + qrSize + 12, y + 24, { width: width - qrSize - 12 });
  return y + qrSize + 24;
}

/** A hybrid slip's cut line, then the ITF barcode and its 44 digits. */
function drawBarcode(doc: PDFKit.PDFDocument, { left, width }: Column, barcode: string, y: number): void {
  doc
    .moveTo(left, y)
    .lineTo(left + width, y)
    .dash(3, { space: 3 })
    .lineWidth(0.5)
    .stroke()
    .undash();
  y += 8;
  doc.font('Helvetica').fontSize(6.5).text('Ficha de compensação - autenticação mecânica', left, y);
  y += 12;
  // A quiet zone of 10 modules before the first bar.
  drawItf(doc, barcode, left + 10 * ITF_NARROW_MODULE, y);
  y += ITF_BAR_HEIGHT + 4;
  doc.font('Courier').fontSize(7).text(barcode, left, y);
}

/** A labelled box: the label small at the top, the value in bold under it (cut with an ellipsis to fit). */
function box(
  doc: PDFKit.PDFDocument,
  label: string,
  value: string,
  x: number,
  boxWidth: number,
  top: number,
  height = 30,
): void {
  doc.rect(x, top, boxWidth, height).lineWidth(0.5).stroke();
  doc
    .font('Helvetica')
    .fontSize(6.5)
    .text(label, x + 3, top + 3, { width: boxWidth - 6 });
  doc
    .font('Helvetica-Bold')
    .fontSize(9)
    .text(value, x + 3, top + 13, { width: boxWidth - 6, height: height - 14, ellipsis: true });
}
