import { sql, type Kysely, type Migration } from 'kysely';

export const emptyBookletFiles: Migration = {
  // booklet_files holds cached PDFs that only the previous release still reads, as a fallback behind
  // booklet_pdfs: emptied, its fallback finds nothing and rebuilds the file on download, as this
  // release does for any file not stored. The table itself stays while a release that reads it may
  // run (a rolling upgrade, a rollback); the release after this one drops it. TRUNCATE takes an
  // ACCESS EXCLUSIVE lock for an instant, under the migrations' lock_timeout, and frees the space at
  // once, where a DELETE would leave every row dead for vacuum.
  async up(db: Kysely<unknown>) {
    await sql`truncate table booklet_files`.execute(db);
  },
};
