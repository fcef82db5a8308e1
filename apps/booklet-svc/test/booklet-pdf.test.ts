import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import type { BookletDocument, BookletInstallment } from '../src/domain/booklet-document';
import { formatReais } from '@payments/br-format';
import { pdfPageCount, readPdf } from '@payments/test-support/pdf-text';
import { bookletPageCount } from '../src/domain/booklet-layout';
import { renderBooklet } from '../src/domain/booklet-pdf';
import { barcodeFor, pixCode, squeeze, typeableLineFor } from './slip-fixtures';

function makeDocument(count: number, pixOnly: (n: number) => boolean = () => false): BookletDocument {
  const installments: BookletInstallment[] = [];
  for (let n = 1; n <= count; n += 1) {
    const month = new Date(Date.UTC(2026, n - 1, 10));
    const dueDate = month.toISOString().slice(0, 10);
    const amountCents = 123_456 + n * 1_001;
    const free = `${String(n).padStart(10, '0')}123456789012345`;
    const barcode = pixOnly(n) ? null : barcodeFor(amountCents, dueDate, free);
    installments.push({
      accountReceivableId: `ar-${n}`,
      number: n,
      dueDate,
      amountCents,
      paid: null,
      instructions: [
        'Conceder desconto de R$ 10,00 para pagamento até o vencimento.',
        'Após o vencimento, cobrar multa de 2,00%.',
        'Após o vencimento, cobrar juros de R$ 0,41 por dia de atraso.',
        'Não receber após 30 dias do vencimento.',
      ],
      ourNumber: `1090000${String(n).padStart(5, '0')}-${n % 10}`,
      typeableLine: barcode ? typeableLineFor(barcode) : null,
      barcode,
      pixCopyAndPaste: pixCode(`a1b2c3d4e5f6a7b8c9d0${String(n).padStart(6, '0')}`, amountCents),
    });
  }
  return {
    paymentSlipId: 'slip-2026-000123',
    payee: {
      name: 'Escola Técnica Horizonte Ltda',
      taxId: '12345678000195',
      address: ['Rua das Acácias, 100 - Centro', 'São Paulo - SP - 01000-000'],
    },
    payer: {
      name: 'Maria da Conceição Araújo',
      taxId: '12345678909',
      address: ['Av. Brasil, 2500, apto 31 - Jardim América', 'Campinas - SP - 13000-000'],
    },
    installments,
  };
}

// --- Helpers -------------------------------------------------------------------------------------

async function render(doc: BookletDocument): Promise<{ pdf: Buffer; pageCount: number }> {
  const chunks: Buffer[] = [];
  const { pageCount } = await renderBooklet(
    doc,
    new PassThrough().on('data', (c: Buffer) => chunks.push(c)),
  );
  return { pdf: Buffer.concat(chunks), pageCount };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// --- Tests ---------------------------------------------------------------------------------------

describe('renderBooklet', () => {
  it('prints a 12-installment booklet: cover, 3 parts a page, every typeable line and label', async () => {
    const doc = makeDocument(12, (n) => n === 5 || n === 12);
    const { pdf, pageCount } = await render(doc);

    expect(pageCount).toBe(5);
    expect(bookletPageCount(12)).toBe(5);
    const { pages } = await readPdf(pdf);
    expect(pages).toHaveLength(5);

    const text = pages.join('\n');
    const squeezed = squeeze(text);
    const hybrid = doc.installments.filter((i) => i.typeableLine !== null);
    expect(hybrid).toHaveLength(10);
    for (const installment of hybrid) {
      expect(installment.typeableLine).toMatch(/^\d{47}$/);
      expect(squeezed).toContain(installment.typeableLine);
    }
    for (let k = 1; k <= 12; k += 1) expect(text).toContain(`Parcela ${k}/12`);
    expect(text).toContain('Maria da Conceição Araújo');
    expect(text).toContain('Escola Técnica Horizonte Ltda');
    expect(text).toContain('Pagamento via PIX');

    const cover = pages[0];
    const total = doc.installments.reduce((sum, i) => sum + i.amountCents, 0);
    expect(cover).toContain('Carnê de pagamento');
    expect(cover).toContain(formatReais(total));
    expect(cover).toContain('10/01/2026');
    expect(cover).toContain('10/12/2026');
    // No typeable line on the cover: it holds only the summary.
    expect(squeeze(cover)).not.toContain(hybrid[0].typeableLine);
  });

  it("prints the payee's CNPJ and the payer's CPF in their official punctuation", async () => {
    const doc = makeDocument(1);
    doc.payee.taxId = '12ABC34501DE35'; // alphanumeric CNPJ (from July 2026), given bare
    const { pdf } = await render(doc);
    const text = (await readPdf(pdf)).pages.join('\n');
    expect(text).toContain('12.ABC.345/01DE-35');
    expect(text).toContain('123.456.789-09');
    expect(text).not.toContain('12ABC34501DE35');
  });

  it('marks a paid installment "PAGO em <date>" and prints none of its payment data', async () => {
    const doc = makeDocument(4, (n) => n === 3);
    // The renderer is handed the paid ones' payment data too: it must still not print any of it.
    doc.installments[1].paid = { on: '2026-02-05' };
    doc.installments[2].paid = { on: '2026-03-01' };
    const [open1, paid2, paid3, open4] = doc.installments;
    const { pdf, pageCount } = await render(doc);
    expect(pageCount).toBe(3);
    const { pages } = await readPdf(pdf);
    const parts = pages.slice(1).join('\n');

    expect(parts).toContain('PAGO em 05/02/2026');
    expect(parts).toContain('PAGO em 01/03/2026');
    expect(parts.match(/PAGO em/g)).toHaveLength(2 * 2); // slip header and the mark under the grid, each
    const squeezed = squeeze(parts);
    expect(squeezed).toContain(open1.typeableLine);
    expect(squeezed).toContain(open4.typeableLine);
    expect(squeezed).not.toContain(paid2.typeableLine);
    // The PIX copy-and-paste text runs over several lines: joined, an open one's reads whole.
    const joined = parts.replace(/\n/g, '');
    expect(joined).toContain(open1.pixCopyAndPaste);
    expect(joined).not.toContain(paid2.pixCopyAndPaste);
    expect(joined).not.toContain(paid3.pixCopyAndPaste);
    expect(parts).not.toContain('Pagamento via PIX'); // the PIX-only one is paid: nothing to pay by PIX
    expect(parts).toContain('Parcela 2/4');
    expect(parts).toContain(formatReais(paid2.amountCents)); // its figures stay

    const cover = pages[0];
    const paidCents = paid2.amountCents + paid3.amountCents;
    const openCents = open1.amountCents + open4.amountCents;
    expect(cover).toContain('4 (2 paga(s))');
    expect(cover).toMatch(new RegExp(`Valor pago\\s*${escape(formatReais(paidCents))}`));
    expect(cover).toMatch(new RegExp(`Valor em aberto\\s*${escape(formatReais(openCents))}`));
    expect(cover.match(/PAGO/g)?.length).toBeGreaterThanOrEqual(2);
  });

  it('prints an installment paid on an unknown day as "PAGO"', async () => {
    const doc = makeDocument(1);
    doc.installments[0].paid = { on: null };
    const parts = (await readPdf((await render(doc)).pdf)).pages[1];
    expect(parts).toContain('PAGO');
    expect(parts).not.toContain('PAGO em');
    expect(squeeze(parts)).not.toContain(doc.installments[0].typeableLine);
  });

  it('prints a single installment on two pages', async () => {
    const { pdf, pageCount } = await render(makeDocument(1));
    expect(pageCount).toBe(2);
    const { pages } = await readPdf(pdf);
    expect(pages).toHaveLength(2);
    expect(pages[1]).toContain('Parcela 1/1');
  });

  it('rejects a malformed barcode before writing anything', async () => {
    const doc = makeDocument(2);
    doc.installments[1].barcode = '123';
    const chunks: Buffer[] = [];
    const sink = new PassThrough().on('data', (c: Buffer) => chunks.push(c));
    await expect(renderBooklet(doc, sink)).rejects.toThrow(/44 digits/);
    expect(chunks).toHaveLength(0);
  });

  it('follows a slow reader (back-pressure) to the end', async () => {
    let bytes = 0;
    const slow = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        setTimeout(done, 1);
      },
    });
    const { pageCount } = await renderBooklet(makeDocument(9), slow);
    expect(pageCount).toBe(4);
    expect(bytes).toBeGreaterThan(10_000);
  });

  it('rejects, without hanging, when the output fails midway', async () => {
    let bytes = 0;
    const failing = new Writable({
      write(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        done(bytes > 20_000 ? new Error('disk full') : null);
      },
    });
    await expect(renderBooklet(makeDocument(60), failing)).rejects.toThrow('disk full');
  });

  it('keeps memory bounded for 300 installments', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'booklet-pdf-'));
    const path = join(dir, 'three-hundred.pdf');
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    try {
      const { pageCount } = await renderBooklet(
        makeDocument(300, (n) => n % 7 === 0),
        createWriteStream(path),
      );
      expect(pageCount).toBe(101);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    // Rough: the PDF is ~0.8 MB and nothing else should stay; the whole document in memory would be far more.
    expect((peak - before) / 1024 / 1024).toBeLessThan(150);
    // Read back once the measurement is over (the reader's memory is not the renderer's).
    try {
      expect(await pdfPageCount(readFileSync(path))).toBe(101);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
