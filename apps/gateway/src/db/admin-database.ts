import { sql, type Kysely } from 'kysely';
import {
  checkDatabase,
  createDatabase,
  databaseNameOf,
  DatabaseUnavailableError,
  displayDatabaseUrl,
  serviceDatabaseUrl,
} from '@payments/db';
import { AdminError } from '../domain/tenancy/tenant-admin';
import { migrations, SCHEMA } from './migrations';
import type { GatewayDatabase } from './schema';

/**
 * The gateway schema, for operator commands that run beside the gateway, logged in as the gateway's
 * role (DATABASE_URL's user replaced by it, as npm start does: development trusts local logins; a
 * deployment gives the CLI the gateway's own URL). It must already be there: `npm run migrate`
 * creates the database and migrates its schema (`npm start` runs it). Creating
 * either here would turn a typo in DATABASE_URL into a tenant in a database no gateway reads, whose
 * token authenticates nowhere; so a missing database, a database without the gateway's tables, or
 * one the gateway has not migrated yet are refused with an AdminError that says what to do, and
 * Postgres out of reach is a DatabaseUnavailableError naming the URL.
 */
export async function openAdminDatabase(given: string): Promise<Kysely<GatewayDatabase>> {
  const url = serviceDatabaseUrl(given, SCHEMA);
  const shown = displayDatabaseUrl(given);
  try {
    // Errors name the URL the operator set, not the role's URL made from it.
    await checkDatabase(url, given);
  } catch (err) {
    if (err instanceof DatabaseUnavailableError && err.problem === 'missing') {
      throw new AdminError(
        `database "${databaseNameOf(url)}" does not exist (DATABASE_URL=${shown}): set DATABASE_URL to the database npm start uses (npm run migrate creates it; npm start runs it)`,
      );
    }
    throw err;
  }
  const db = createDatabase<GatewayDatabase>({ url, schema: SCHEMA, poolSize: 2, applicationName: 'admin-cli' });
  try {
    const pending = await pendingMigrations(db);
    if (pending === 'no schema') {
      throw new AdminError(
        `database "${databaseNameOf(url)}" has no gateway tables (DATABASE_URL=${shown}): run npm run migrate on it, or set DATABASE_URL to the database npm start uses`,
      );
    }
    if (pending.length > 0) {
      throw new AdminError(
        `the gateway tables in database "${databaseNameOf(url)}" lack migration ${pending.join(', ')} (DATABASE_URL=${shown}): run npm run migrate`,
      );
    }
    return db;
  } catch (err) {
    await db.destroy();
    throw err;
  }
}

/** The gateway migrations not applied yet, or 'no schema' when the gateway never migrated this database. */
async function pendingMigrations(db: Kysely<GatewayDatabase>): Promise<string[] | 'no schema'> {
  const table = await sql<{
    found: string | null;
  }>`select to_regclass(${`${SCHEMA}.kysely_migration`})::text as found`.execute(db);
  if (!table.rows[0]?.found) return 'no schema';
  const applied = await sql<{ name: string }>`select name from ${sql.table(`${SCHEMA}.kysely_migration`)}`.execute(db);
  const done = new Set(applied.rows.map((r) => r.name));
  return Object.keys(migrations).filter((name) => !done.has(name));
}
