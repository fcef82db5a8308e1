import { sql, type Kysely } from 'kysely';
import { startPartitionMaintenance, type PartitionedTable } from '@payments/db';
import type { Logger } from '@payments/logger';
import type { PdfStore } from '../domain/ports';
import type { BookletsDatabase } from './schema';

/**
 * Booklet PDFs are kept for a retention (BOOKLET_FILE_RETENTION_DAYS), then dropped with their day's
 * partition of `booklet_pdfs`; a download after that rebuilds the file (domain/booklet-downloads.ts).
 *
 * Why a table beside `booklet_files` rather than that table converted in place: an earlier release
 * stored a file with `insert ... on conflict (booklet_id) do update`, and Postgres accepts that only
 * with a unique index on booklet_id alone, which a table partitioned by time cannot have (its unique
 * indexes must hold the partition key). Migration 0008 emptied `booklet_files` while a release that
 * read it as a fallback could still run; 0009, a release later, drops it.
 */
export const BOOKLET_PDFS = 'booklet_pdfs';

/** Daily partitions: a file outlives its retention by at most a day, not by a month. */
export function bookletPdfPartitions(retentionDays: number): PartitionedTable {
  return { table: BOOKLET_PDFS, period: 'day', retentionDays, ahead: 3 };
}

/** PDFs in the service's own schema (bytea), partitioned by the day they were stored. */
export class PostgresPdfStore implements PdfStore {
  constructor(private readonly db: Kysely<BookletsDatabase>) {}

  /**
   * One file per booklet: the previous one (an earlier build, another instance's rebuild) is replaced,
   * under a lock on the booklet's id, since the partitioned table has no unique key on it alone.
   */
  async put(bookletId: string, pdf: Buffer): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${`booklet_pdfs:${bookletId}`}, 0))`.execute(trx);
      await trx.deleteFrom('booklet_pdfs').where('booklet_id', '=', bookletId).execute();
      await trx.insertInto('booklet_pdfs').values({ booklet_id: bookletId, pdf }).execute();
    });
  }

  /** The booklet's file, none once its partition was dropped past the retention. */
  async get(bookletId: string): Promise<Buffer | undefined> {
    const row = await this.db
      .selectFrom('booklet_pdfs')
      .select('pdf')
      .where('booklet_id', '=', bookletId)
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.pdf;
  }
}

export interface BookletFileRetention {
  stop(): Promise<void>;
}

/**
 * In the background of every instance: partitions of `booklet_pdfs` created days ahead and dropped
 * past the retention (libs/db partitions.ts, hourly).
 */
export function startBookletFileRetention(opts: {
  db: Kysely<BookletsDatabase>;
  schema: string;
  retentionDays: number;
  logger: Logger;
  intervalMs?: number;
}): BookletFileRetention {
  return startPartitionMaintenance({
    // libs/db takes any schema's database; Kysely's types are invariant in it.
    db: opts.db as unknown as Kysely<unknown>,
    schema: opts.schema,
    tables: [bookletPdfPartitions(opts.retentionDays)],
    logger: opts.logger,
    intervalMs: opts.intervalMs,
  });
}
