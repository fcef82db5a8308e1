import { sql, type Kysely, type Migration } from 'kysely';

/*
 * The search's optional filters (docs/api.md, "Search"): payer name, payer tax id, our_number and
 * amount. The migration adds what a query needs to exist (a folding function, the trigram extension);
 * the indexes on the large receivables table are online indexes, built concurrently after it
 * (search-filter-indexes.ts).
 */

/** Accented letters of Portuguese (and neighbours) and what they fold to; combining marks are dropped. */
const ACCENTED = 'ÀÁÂÃÄÅàáâãäåÇçÈÉÊËèéêëÌÍÎÏìíîïÑñÒÓÔÕÖòóôõöÙÚÛÜùúûüÝýÿ';
const PLAIN = 'AAAAAAaaaaaaCcEEEEeeeeIIIIiiiiNnOOOOOoooooUUUUuuuuYyy';
/** U+0300..U+036F, the combining diacritical marks of a decomposed (NFD) name: translate() removes them. */
const COMBINING_MARKS = Array.from({ length: 0x70 }, (_, i) => String.fromCharCode(0x300 + i)).join('');

/** Only one transaction at a time creates the extension of a database, whichever schema migrates. */
const EXTENSION_LOCK = 'create extension pg_trgm';

export const searchFilters: Migration = {
  async up(db: Kysely<unknown>) {
    // search_fold: lower case without accents, immutable so an index may hold it. unaccent() is
    // neither immutable nor a trusted extension; translate() over a fixed list is both cheap and pure.
    await sql
      .raw(
        `create function search_fold(name text) returns text language sql immutable strict parallel safe
         as $$ select lower(translate(name, '${ACCENTED}${COMBINING_MARKS}', '${PLAIN}')) $$`,
      )
      .execute(db);
    await ensureTrigramExtension(db);
  },
};

/**
 * pg_trgm makes a substring (LIKE '%...%') search use a GIN index. The service's role may not create
 * an extension (that takes CREATE on the database), so this one statement runs as the migration user
 * (docs/architecture.md, "Database roles and migrations"), in schema public where every role finds its
 * operator class; the role is set back at once.
 */
async function ensureTrigramExtension(db: Kysely<unknown>): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${EXTENSION_LOCK}))`.execute(db);
  const found = await sql<{ schema: string }>`
    select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace
    where e.extname = 'pg_trgm'`.execute(db);
  const installed = found.rows[0]?.schema;
  if (installed === 'public') return;
  if (installed !== undefined)
    throw new Error(`pg_trgm is installed in schema ${installed}: the payer name index expects it in public`);
  const role = await sql<{ role: string }>`select current_user as role`.execute(db);
  await sql`set local role none`.execute(db);
  try {
    await sql`create extension pg_trgm with schema public`.execute(db);
  } catch (err) {
    throw new Error(
      'could not create extension pg_trgm (PostgreSQL contrib): run npm run migrate as a user that may, or have an administrator run "create extension pg_trgm with schema public"',
      { cause: err },
    );
  }
  const back = role.rows[0]?.role;
  if (back) await sql`select set_config('role', ${back}, true)`.execute(db);
}
