import type { Kysely } from 'kysely';
import { createDatabase, ensureDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../db/migrations';
import type { GatewayDatabase } from '../db/schema';

/** The gateway schema, migrated, for operator commands that run before (or beside) the gateway. */
export async function openAdminDatabase(url: string): Promise<Kysely<GatewayDatabase>> {
  await ensureDatabase(url);
  const db = createDatabase<GatewayDatabase>({ url, schema: SCHEMA, poolSize: 2, applicationName: 'admin-cli' });
  await migrateToLatest(db, SCHEMA, migrations);
  return db;
}
