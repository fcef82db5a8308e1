import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import { assertIdentifier } from './database';

/** The schema holds migrations this code does not know, and lacks some it knows: no order fixes that. */
export class MigrationsDivergedError extends Error {
  constructor(schema: string, unknown: string[], missing: string[]) {
    super(
      `schema ${schema} has migrations this version does not know (${unknown.join(', ')}) and lacks some it needs (${missing.join(', ')})`,
    );
    this.name = 'MigrationsDivergedError';
  }
}

/**
 * Runs a service's migrations in its own schema. Migrations are code (a record name -> Migration),
 * ordered by name. Kysely's Migrator holds a Postgres advisory lock while it runs, so several
 * instances starting at once apply each migration exactly once.
 *
 * A schema already ahead of this code (a newer version migrated it: a rolling upgrade under way, or
 * a rollback) is used as it is. Migrations are written expand-then-contract, so the previous version
 * runs on the newer schema; Kysely's Migrator would refuse it ("previously executed migration is
 * missing") and an older instance restarting mid-upgrade could not start. Returns what it did.
 */
export async function migrateToLatest<DB>(
  database: Kysely<DB>,
  schema: string,
  migrations: Record<string, Migration>,
  logger?: { warn(details: object, message: string): void },
): Promise<{ aheadBy: string[] }> {
  assertIdentifier(schema);
  // Migrations are written against no particular table types.
  const db = database as unknown as Kysely<unknown>;
  await db.transaction().execute(async (trx) => {
    // CREATE SCHEMA IF NOT EXISTS races with itself; serialise it.
    await sql`select pg_advisory_xact_lock(hashtext(${`schema:${schema}`}))`.execute(trx);
    await sql`create schema if not exists ${sql.id(schema)}`.execute(trx);
  });
  const applied = await appliedMigrations(db, schema);
  const aheadBy = applied.filter((name) => !(name in migrations));
  if (aheadBy.length > 0) {
    const missing = Object.keys(migrations).filter((name) => !applied.includes(name));
    if (missing.length > 0) throw new MigrationsDivergedError(schema, aheadBy, missing);
    logger?.warn({ schema, aheadBy }, 'schema migrated by a newer version: running on it as it is');
    return { aheadBy };
  }
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(
      `migration of schema ${schema} failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`,
    );
  }
  return { aheadBy: [] };
}

/** Names of the migrations applied to the schema; none before its first migration. */
async function appliedMigrations(db: Kysely<unknown>, schema: string): Promise<string[]> {
  const table = await sql<{
    found: string | null;
  }>`select to_regclass(${`${schema}.kysely_migration`})::text as found`.execute(db);
  if (!table.rows[0]?.found) return [];
  const applied = await sql<{ name: string }>`select name from ${sql.table(`${schema}.kysely_migration`)}`.execute(db);
  return applied.rows.map((r) => r.name);
}
