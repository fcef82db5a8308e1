/**
 * bench/booklet: time and peak memory to render booklet (carnê) PDFs of 12 and 1,000 installments to a
 * file, beside a bare baseline in the same run: pdfkit writing the same number of pages of plain text
 * (no images, no barcodes). Targets: 12 installments in < 300 ms, 1,000 in < 20 s, peak RSS < 300 MB.
 *
 * Every case runs in its own child process (node --import tsx), so its peak RSS (maxRSS) is its own.
 * Each child first renders a 3-installment booklet (warm-up: module loading, JIT, font metrics), as a
 * long-running booklet-svc would have, then times one render. The "idle" child loads and warms up only:
 * its peak is the floor every other figure stands on.
 *
 *   npx tsx bench/booklet.ts            (BENCH_BOOKLET_SIZES=12,1000 to change the sizes)
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import PDFDocument from 'pdfkit';
import { formatReais } from '@payments/br-format';
import { bookletPageCount, renderBooklet, type BookletDocument, type BookletInstallment } from '@payments/booklet-svc';
import { fmt } from './support';

const SIZES = (process.env.BENCH_BOOKLET_SIZES ?? '12,1000').split(',').map(Number);
const TARGET_MS: Record<number, number> = { 12: 300, 1000: 20_000 };
const TARGET_RSS_MB = 300;

type Kind = 'idle' | 'booklet' | 'baseline';
interface ChildResult {
  kind: Kind;
  installments: number;
  pages: number;
  ms: number;
  bytes: number;
  /** RSS after warm-up, before the timed render. */
  startRssMb: number;
  /** process.resourceUsage().maxRSS: the child's peak resident set. */
  peakRssMb: number;
}

// --- The documents -------------------------------------------------------------------------------

/** n installments, monthly, every seventh PIX-only; the barcodes are well-formed 44-digit strings. */
function makeDocument(n: number): BookletDocument {
  const installments: BookletInstallment[] = [];
  for (let k = 1; k <= n; k += 1) {
    const dueDate = new Date(Date.UTC(2026, k - 1, 10)).toISOString().slice(0, 10);
    const amountCents = 25_000 + k * 37;
    const pixOnly = k % 7 === 0;
    const barcode = pixOnly
      ? null
      : `23799${String(1000 + (k % 9000)).padStart(4, '0')}${String(amountCents).padStart(10, '0')}${String(k).padStart(25, '0')}`;
    installments.push({
      accountReceivableId: `ar-${k}`,
      number: k,
      dueDate,
      amountCents,
      paid: null,
      instructions: [
        'Conceder desconto de R$ 5,00 para pagamento até o vencimento.',
        'Após o vencimento, cobrar multa de 2,00%.',
        'Após o vencimento, cobrar juros de R$ 0,08 por dia de atraso.',
      ],
      ourNumber: `10900${String(k).padStart(7, '0')}`,
      typeableLine: barcode
        ? `${barcode.slice(0, 4)}${barcode.slice(19, 24)}0${barcode.slice(24, 34)}0${barcode.slice(34, 44)}0${barcode[4]}${barcode.slice(5, 19)}`
        : null,
      barcode,
      pixCopyAndPaste: `00020101021226900014br.gov.bcb.pix2568pix.sandbox.example/qr/v2/cobv/${String(k).padStart(26, '0')}5204000053039865406${(amountCents / 100).toFixed(2)}5802BR5920LOJA EXEMPLO LTDA6009SAO PAULO62070503***6304ABCD`,
    });
  }
  return {
    paymentSlipId: `bench-${n}`,
    payee: {
      name: 'Escola Técnica Horizonte Ltda',
      taxId: '12345678000195',
      address: ['Rua das Acácias, 100 - Centro', 'São Paulo - SP - 01000-000'],
    },
    payer: {
      name: 'Maria da Conceição Araújo',
      taxId: '12345678909',
      address: ['Av. Brasil, 2500, apto 31', 'Campinas - SP - 13000-000'],
    },
    installments,
  };
}

/** The baseline: as many pages as the booklet, three blocks of plain text a page, no images or barcodes. */
async function renderBaseline(doc: BookletDocument, out: NodeJS.WritableStream): Promise<{ pageCount: number }> {
  const pdf = new PDFDocument({ autoFirstPage: false, bufferPages: false, compress: true, size: 'A4', margin: 0 });
  let pageCount = 0;
  pdf.on('pageAdded', () => (pageCount += 1));
  const written = pipeline(pdf, out);
  pdf.addPage({ size: 'A4', margin: 0 });
  pdf.font('Helvetica-Bold').fontSize(24).text('Carnê de pagamento', 40, 40, { lineBreak: false });
  pdf.font('Helvetica').fontSize(9);
  for (const [line, text] of [doc.payee.name, doc.payer.name, `${doc.installments.length} parcelas`].entries())
    pdf.text(text, 40, 90 + line * 14, { lineBreak: false });
  const total = doc.installments.length;
  for (let i = 0; i < total; i += 1) {
    if (i % 3 === 0) {
      pdf.addPage({ size: 'A4', margin: 0 });
      await new Promise(setImmediate);
    }
    const top = 30 + (i % 3) * 265;
    const it = doc.installments[i];
    const lines = [
      `Parcela ${it.number}/${total}`,
      `Vencimento ${it.dueDate}`,
      `Valor ${formatReais(it.amountCents)}`,
      `Nosso número ${it.ourNumber}`,
      doc.payee.name,
      doc.payer.name,
      ...it.instructions,
      it.typeableLine ?? 'Pagamento via PIX',
      it.pixCopyAndPaste.slice(0, 90),
      it.pixCopyAndPaste.slice(90),
    ];
    lines.forEach((text, line) => pdf.text(text, 40, top + line * 12, { lineBreak: false }));
  }
  pdf.end();
  await written;
  return { pageCount };
}

const discard = () => new Writable({ write: (_chunk, _encoding, done) => done() });

// --- Child: one case -------------------------------------------------------------------------------

async function child(kind: Kind, n: number): Promise<void> {
  const render = kind === 'baseline' ? renderBaseline : renderBooklet;
  await render(makeDocument(3), discard());
  const startRssMb = process.memoryUsage().rss / 1024 / 1024;
  let result: ChildResult = { kind, installments: n, pages: 0, ms: 0, bytes: 0, startRssMb, peakRssMb: 0 };
  if (kind !== 'idle') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-booklet-'));
    try {
      const file = join(dir, `${kind}-${n}.pdf`);
      const doc = makeDocument(n);
      const started = performance.now();
      const { pageCount } = await render(doc, createWriteStream(file));
      const ms = performance.now() - started;
      result = { ...result, pages: pageCount, ms, bytes: statSync(file).size };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  result.peakRssMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

// --- Parent: run the cases, print the table ---------------------------------------------------------

function runChild(kind: Kind, n: number): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', __filename, '--child', kind, String(n)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.once('error', reject);
    proc.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`bench child ${kind} ${n} exited ${code}: ${out}`));
      else resolve(JSON.parse(line) as ChildResult);
    });
  });
}

async function main(): Promise<void> {
  const idle = await runChild('idle', 0);
  const rows: Array<{ booklet: ChildResult; baseline: ChildResult }> = [];
  for (const n of SIZES) {
    const baseline = await runChild('baseline', n);
    const booklet = await runChild('booklet', n);
    if (booklet.pages !== bookletPageCount(n) || baseline.pages !== booklet.pages)
      throw new Error(`page counts differ: ${booklet.pages} vs ${baseline.pages}`);
    rows.push({ booklet, baseline });
  }

  const pad = (s: string, w: number) => s.padStart(w);
  console.log('\nbench/booklet (each case in its own process, after a 3-installment warm-up render)');
  console.log(`  idle process (modules loaded, warm-up done): peak RSS ${fmt(idle.peakRssMb, 1)} MB`);
  console.log(
    `  ${'installments'.padEnd(12)} ${pad('pages', 6)} ${pad('ms', 9)} ${pad('peak RSS MB', 12)} ${pad('PDF KB', 9)} | ${pad('baseline ms', 12)} ${pad('baseline RSS MB', 16)} ${pad('baseline KB', 12)} | ${pad('x baseline', 10)}`,
  );
  for (const { booklet, baseline } of rows) {
    console.log(
      `  ${String(booklet.installments).padEnd(12)} ${pad(String(booklet.pages), 6)} ${pad(fmt(booklet.ms, 1), 9)} ${pad(fmt(booklet.peakRssMb, 1), 12)} ${pad(fmt(booklet.bytes / 1024), 9)} | ${pad(fmt(baseline.ms, 1), 12)} ${pad(fmt(baseline.peakRssMb, 1), 16)} ${pad(fmt(baseline.bytes / 1024), 12)} | ${pad(fmt(booklet.ms / baseline.ms, 1), 10)}`,
    );
  }
  console.log('  targets:');
  for (const { booklet } of rows) {
    const target = TARGET_MS[booklet.installments];
    if (target)
      console.log(
        `    ${fmt(booklet.installments)} installments in < ${fmt(target)} ms: ${fmt(booklet.ms, 1)} ms ${booklet.ms < target ? 'OK' : 'MISSED'}`,
      );
  }
  const peak = Math.max(...rows.map((r) => r.booklet.peakRssMb));
  console.log(`    peak RSS < ${TARGET_RSS_MB} MB: ${fmt(peak, 1)} MB ${peak < TARGET_RSS_MB ? 'OK' : 'MISSED'}`);
}

if (process.argv[2] === '--child') {
  child(process.argv[3] as Kind, Number(process.argv[4])).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
} else {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
