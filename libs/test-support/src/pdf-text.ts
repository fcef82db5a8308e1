/**
 * Reads a PDF back as the text of each page, in process with unpdf (PDF.js): tests need no poppler.
 * Each page's text is its text runs in drawing order, a line break where PDF.js sees a line end; a run
 * drawn with one call (a typeable line, a name) stays whole.
 */
import { dirname, join } from 'node:path';
import { definePDFJSModule, extractText, getDocumentProxy } from 'unpdf';

export interface PdfText {
  /** The text of page 1, 2, ... (so `pages.length` is the page count). */
  pages: string[];
}

let pdfjsLoaded: Promise<void> | undefined;

/**
 * unpdf loads its PDF.js bundle with `import()`, which jest's CommonJS runtime refuses. Handing it the
 * bundle's file through our own `import()` (swc turns it into a require, jest.preset.js transforms the
 * .mjs) works the same under jest and plain Node.
 */
function loadPdfjs(): Promise<void> {
  pdfjsLoaded ??= definePDFJSModule(() => import(join(dirname(require.resolve('unpdf')), 'pdfjs.mjs')));
  return pdfjsLoaded;
}

export async function readPdf(bytes: Uint8Array): Promise<PdfText> {
  await loadPdfjs();
  // A copy: PDF.js takes over (detaches) the buffer it is given, and wants a plain Uint8Array.
  const { text } = await extractText(new Uint8Array(bytes), { mergePages: false });
  return { pages: text };
}

/** The page count alone: no text is extracted (a 100-page booklet in ~10 ms instead of ~1 s). */
export async function pdfPageCount(bytes: Uint8Array): Promise<number> {
  await loadPdfjs();
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    return pdf.numPages;
  } finally {
    await pdf.loadingTask.destroy();
  }
}
