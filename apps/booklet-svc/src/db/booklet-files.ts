import { sql, type Kysely } from 'kysely';
import { startPartitionMaintenance, type PartitionedTable } from '@payments/db';
import { startPeriodic } from '@payments/lifecycle';
import type { Logger } from '@payments/logger';
import type { PdfStore } from '../domain/ports';
import type { BookletsDatabase } from './schema';

/**
 * Booklet PDFs are kept for a retention (BOOKLET_FILE_RETENTION_DAYS), then dropped with their day's
 * partition of `booklet_pdfs`; a download after that rebuilds the file (domain/booklet-downloads.ts).
 *
 * Why a new table beside `booklet_files` rather than that table converted in place: the previous
 * release stores a file with `insert ... on conflict (booklet_id) do update`, and Postgres accepts
 * that only with a unique index on booklet_id alone, which a table partitioned by time cannot have
 * (its unique indexes must hold the partition key). So `booklet_files` stays a plain table, written
 * only by the previous release during an upgrade (and after a rollback); this release reads it as a
 * fallback, honours the retention there too, and empties it in small batches. The table goes in the
 * release after.
 */
export const BOOKLET_PDFS = 'booklet_pdfs';

/** Daily partitions: a file outlives its retention by at most a day, not by a month. */
export function bookletPdfPartitions(retentionDays: number): PartitionedTable {
  return { table: BOOKLET_PDFS, period: 'day', retentionDays, ahead: 3 };
}

/** PDFs in the service's own schema (bytea), partitioned by the day they were stored. */
export class PostgresPdfStore implements PdfStore {
  constructor(
    private readonly db: Kysely<BookletsDatabase>,
    private readonly retentionDays: number,
  ) {}

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

  /** The newest file, here or in the previous release's table; none once past the retention there. */
  async get(bookletId: string): Promise<Buffer | undefined> {
    const { rows } = await sql<{ pdf: Buffer }>`
      select pdf from (
        select pdf, created_at from booklet_pdfs where booklet_id = ${bookletId}
        union all
        select pdf, created_at from booklet_files where booklet_id = ${bookletId}
          and created_at >= now() - make_interval(days => ${this.retentionDays})
      ) f order by created_at desc limit 1`.execute(this.db);
    return rows[0]?.pdf;
  }
}

/**
 * Deletes the previous release's files older than the retention, `batch` rows per statement so that
 * no statement holds many row locks or runs long; stops after `maxBatches` (the next run goes on).
 * Each batch walks the primary key on from where the last one stopped: that table has no index on
 * created_at, and a scan from the start each time would pass over every row deleted before it.
 * The table no longer grows once no instance of the previous release runs, so this ends.
 */
export async function deleteExpiredLegacyFiles(
  db: Kysely<BookletsDatabase>,
  retentionDays: number,
  batch = 500,
  maxBatches = 100,
): Promise<number> {
  let deleted = 0;
  let after = '00000000-0000-0000-0000-000000000000';
  for (let i = 0; i < maxBatches; i++) {
    const { rows } = await sql<{ booklet_id: string }>`
      delete from booklet_files where booklet_id in (
          select booklet_id from booklet_files
          where booklet_id > ${after}::uuid and created_at < now() - make_interval(days => ${retentionDays})
          order by booklet_id limit ${batch})
      returning booklet_id::text`.execute(db);
    deleted += rows.length;
    if (rows.length < batch) break;
    after = rows.map((r) => r.booklet_id).reduce((a, b) => (a > b ? a : b));
  }
  return deleted;
}

export interface BookletFileRetention {
  stop(): Promise<void>;
}

/**
 * In the background of every instance: partitions of `booklet_pdfs` created days ahead and dropped
 * past the retention (libs/db partitions.ts, hourly), and the previous release's files swept.
 */
export function startBookletFileRetention(opts: {
  db: Kysely<BookletsDatabase>;
  schema: string;
  retentionDays: number;
  logger: Logger;
  intervalMs?: number;
}): BookletFileRetention {
  const intervalMs = opts.intervalMs ?? 3_600_000;
  const partitions = startPartitionMaintenance({
    // libs/db takes any schema's database; Kysely's types are invariant in it.
    db: opts.db as unknown as Kysely<unknown>,
    schema: opts.schema,
    tables: [bookletPdfPartitions(opts.retentionDays)],
    logger: opts.logger,
    intervalMs,
  });
  const legacy = startPeriodic(
    async () => {
      const deleted = await deleteExpiredLegacyFiles(opts.db, opts.retentionDays);
      if (deleted > 0) opts.logger.info({ deleted }, 'deleted booklet files past their retention (booklet_files)');
    },
    { intervalMs, logger: opts.logger, what: 'booklet file retention', runAtStart: true },
  );
  return {
    async stop() {
      await Promise.all([partitions.stop(), legacy.stop()]);
    },
  };
}
