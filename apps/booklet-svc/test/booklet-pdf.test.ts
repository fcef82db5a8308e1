import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import type { BookletDocument, BookletInstallment } from '../src/domain/booklet-document';
import { formatReais } from '@payments/br-format';
import { pdfPageCount, readPdf } from '@payments/test-support/pdf-text';
import { bookletPageCount, renderBooklet } from '../src/domain/booklet-pdf';

// --- A valid-looking FEBRABAN barcode and its typeable line (same rules as the bank's) -------------

function modulo10(digits: string): number {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i -= 1) {
    const product = Number(digits[i]) * weight;
    sum += product > 9 ? product - 9 : product;
    weight = weight === 2 ? 1 : 2;
  }
  return (10 - (sum % 10)) % 10;
}

function modulo11(digits: string): number {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i -= 1) {
    sum += Number(digits[i]) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const digit = 11 - (sum % 11);
  return digit === 0 || digit > 9 ? 1 : digit;
}

function dueFactor(dueDate: string): string {
  const days = Math.round((Date.parse(`${dueDate}T00:00:00Z`) - Date.parse('1997-10-07T00:00:00Z')) / 86_400_000);
  return String(days < 10_000 ? days : ((days - 10_000) % 9_000) + 1_000).padStart(4, '0');
}

function barcodeFor(amountCents: number, dueDate: string, freeField: string): string {
  const body = `2379${dueFactor(dueDate)}${String(amountCents).padStart(10, '0')}${freeField}`;
  return body.slice(0, 4) + modulo11(body) + body.slice(4);
}

function typeableLineFor(barcode: string): string {
  const free = barcode.slice(19);
  const f1 = barcode.slice(0, 4) + free.slice(0, 5);
  const f2 = free.slice(5, 15);
  const f3 = free.slice(15, 25);
  return `${f1}${modulo10(f1)}${f2}${modulo10(f2)}${f3}${modulo10(f3)}${barcode[4]}${barcode.slice(5, 19)}`;
}

function pixCode(id: string, amountCents: number): string {
  const amount = (amountCents / 100).toFixed(2);
  return `00020101021226900014br.gov.bcb.pix2568pix.sandbox.example/qr/v2/cobv/${id}5204000053039865406${amount}5802BR5920LOJA EXEMPLO LTDA6009SAO PAULO62070503***6304ABCD`;
}

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

/** Each line of the text without spaces and dots, so a typeable line printed in groups reads as its 47 digits. */
function squeeze(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ .]/g, ''))
    .join('\n');
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
