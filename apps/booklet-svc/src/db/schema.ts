import type { Generated, Selectable } from 'kysely';
import type { OutboxDatabase } from '@payments/outbox';

/** Tables of schema `booklets`: one row per booklet request, its PDF once built. */
export type BookletStatus = 'queued' | 'ready' | 'failed';

export interface BookletsTable {
  id: string;
  tenant_id: string;
  /** The key (uuid): any spelling matches. */
  payment_slip_id: string;
  /** As the ERP spelled it on the charges (receivables-svc tells): what answers and callbacks show. */
  payment_slip_id_as_sent: string;
  url_callback: string;
  status: BookletStatus;
  installment_count: number | null;
  page_count: number | null;
  error: string | null;
  created_at: Generated<Date>;
  finished_at: Date | null;
}

/**
 * The PDFs, apart from the requests (a file store behind PdfStore; an object store can replace it),
 * partitioned by day of `created_at` and dropped past their retention (db/booklet-files.ts).
 */
export interface BookletPdfsTable {
  booklet_id: string;
  pdf: Buffer;
  created_at: Generated<Date>;
}

export interface BookletsDatabase extends OutboxDatabase {
  booklets: BookletsTable;
  booklet_pdfs: BookletPdfsTable;
}

export type BookletRow = Selectable<BookletsTable>;
