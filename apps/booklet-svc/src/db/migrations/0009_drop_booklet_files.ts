import { sql, type Kysely, type Migration } from 'kysely';

export const dropBookletFiles: Migration = {
  // The contract step of 0008: no release that may still run beside this one (the previous one, in a
  // rolling upgrade or a rollback) reads or writes booklet_files, whose last reader went with the
  // release 0008 shipped in. Its ACCESS EXCLUSIVE lock is on that table alone, which nothing uses.
  async up(db: Kysely<unknown>) {
    await sql`drop table if exists booklet_files`.execute(db);
  },
};
