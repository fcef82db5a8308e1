import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import { assertIdentifier } from './database';

/**
 * Runs a service's migrations in its own schema. Migrations are code (a record name -> Migration),
 * ordered by name. Kysely's Migrator holds a Postgres advisory lock while it runs, so several
 * instances starting at once apply each migration exactly once.
 */
export async function migrateToLatest<DB>(
  database: Kysely<DB>,
  schema: string,
  migrations: Record<string, Migration>,
): Promise<void> {
  assertIdentifier(schema);
  // Migrations are written against no particular table types.
  const db = database as unknown as Kysely<unknown>;
  await db.transaction().execute(async (trx) => {
    // CREATE SCHEMA IF NOT EXISTS races with itself; serialise it.
    await sql`select pg_advisory_xact_lock(hashtext(${`schema:${schema}`}))`.execute(trx);
    await sql`create schema if not exists ${sql.id(schema)}`.execute(trx);
  });
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
}
