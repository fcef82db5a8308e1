import type { Kysely } from 'kysely';
import { ServiceError } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import type { BookletRow, BookletsDatabase } from '../db/schema';
import { currentContents, renderToBuffer } from './booklet-builder';
import type { InstallmentSource, PdfStore } from './ports';

export interface DownloadDeps {
  db: Kysely<BookletsDatabase>;
  source: InstallmentSource;
  store: PdfStore;
  logger: Logger;
}

export interface BookletFile {
  /** As the ERP spelled it on its charges: the file is named after it. */
  paymentSlipId: string;
  pdf: Buffer;
}

/**
 * The PDF of a built booklet, for a signed download link. A file is kept for its retention
 * (BOOKLET_FILE_RETENTION_DAYS), then dropped with its partition; a download after that
 * rebuilds it here from the booklet's stored request, stores it again (for another retention) and
 * answers it.
 *
 * The rebuild is synchronous: the link answers the PDF, never a 202 to poll. The link is what the
 * specification gives the ERP ("a link to the booklet PDF"), and it is often handed on to the payer's
 * browser, which can follow no job. A rebuild costs what a build does (bench/booklet.ts), within
 * the gateway's wait for a download even for the largest booklet.
 * Concurrent downloads of one missing file on an instance share one rebuild.
 *
 * The rebuilt booklet prints its installments as they are now, as a build would: one paid since
 * shows as paid, one cancelled since is left out. None left (every one cancelled): 410.
 */
export class BookletDownloads {
  private readonly rebuilds = new Map<string, Promise<Buffer>>();

  constructor(private readonly deps: DownloadDeps) {}

  async download(bookletId: string): Promise<BookletFile> {
    const booklet = await this.deps.db
      .selectFrom('booklets')
      .selectAll()
      .where('id', '=', bookletId)
      .executeTakeFirst();
    if (!booklet || booklet.status !== 'ready') throw new ServiceError('not_found', 'no such booklet');
    return { paymentSlipId: booklet.payment_slip_id_as_sent, pdf: await this.fileOnce(booklet) };
  }

  /**
   * The stored file, or a rebuild of it, shared by the downloads of one booklet in flight together.
   * The lookup is shared too: a download that read "no file" just before another's rebuild stored
   * one and left would otherwise rebuild it a second time.
   */
  private fileOnce(booklet: BookletRow): Promise<Buffer> {
    let file = this.rebuilds.get(booklet.id);
    if (!file) {
      file = this.storedOrRebuilt(booklet).finally(() => this.rebuilds.delete(booklet.id));
      this.rebuilds.set(booklet.id, file);
    }
    return file;
  }

  private async storedOrRebuilt(booklet: BookletRow): Promise<Buffer> {
    return (await this.deps.store.get(booklet.id)) ?? (await this.rebuild(booklet));
  }

  private async rebuild(booklet: BookletRow): Promise<Buffer> {
    const contents = await currentContents(this.deps.source, booklet);
    if (contents.kind === 'empty')
      throw new ServiceError(
        'gone',
        'every installment of this booklet was cancelled or rejected since it was built: there is nothing left to print',
      );
    // A built booklet's installments were registered; one that is not (never seen) cannot be printed yet.
    if (contents.kind === 'waiting')
      throw new ServiceError('service_unavailable', 'the booklet cannot be rebuilt yet; try again shortly');
    const started = performance.now();
    const { pdf } = await renderToBuffer(contents.doc);
    await this.deps.store.put(booklet.id, pdf);
    this.deps.logger.info(
      {
        bookletId: booklet.id,
        installments: contents.doc.installments.length,
        ms: Math.round(performance.now() - started),
      },
      'rebuilt a booklet file dropped past its retention',
    );
    return pdf;
  }
}
