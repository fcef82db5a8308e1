export { startBookletService, type RunningBookletService } from './service';
export { loadBookletConfig, type BookletConfig } from './config';
// The PDF renderer on its own, for bench/booklet.ts.
export { bookletPageCount } from './domain/booklet-layout';
export { renderBooklet } from './domain/booklet-pdf';
export type { BookletDocument, BookletInstallment } from './domain/booklet-document';
