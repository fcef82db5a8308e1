import { sql, type Kysely, type Migration } from 'kysely';
import { createPartitionsAhead } from '@payments/db';
import { BOOKLET_PDFS, bookletPdfPartitions } from '../booklet-files';
import { SCHEMA } from './schema-name';

export const bookletPdfs: Migration = {
  // The PDFs by day, dropped with their partition past the retention; the previous release's
  // booklet_files stays as it is (db/booklet-files.ts says why). No foreign key to booklets: dropping
  // a partition would then lock booklets too.
  async up(db: Kysely<unknown>) {
    await sql`create table ${sql.table(BOOKLET_PDFS)} (
        booklet_id uuid not null,
        pdf bytea not null,
        created_at timestamptz not null default now(),
        primary key (booklet_id, created_at)
      ) partition by range (created_at)`.execute(db);
    // pdfkit compresses its streams: Postgres trying again would spend CPU for nothing.
    await sql`alter table ${sql.table(BOOKLET_PDFS)} alter column pdf set storage external`.execute(db);
    // The retention plays no part in creating partitions.
    await createPartitionsAhead(db, SCHEMA, bookletPdfPartitions(1));
  },
};
