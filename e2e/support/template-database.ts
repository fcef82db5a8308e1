import { createTestDatabase } from '@payments/db';
import { migrateAll } from '@payments/scripts/migrate';
import { dropDatabase } from './launcher';

/*
 * The migrated database every system of a whole e2e run is copied from (e2e/support/run-shards.sh
 * makes it before the shards and drops it after; system.ts copies it when TEST_TEMPLATE_DATABASE
 * names it). Each system still runs `npm run migrate`'s steps on its copy, which finds nothing to
 * apply and writes the role settings of that database; what it saves is applying every migration of
 * every schema, a few seconds a system on a loaded machine.
 *
 *   node --import tsx support/template-database.ts create   prints the new database's name
 *   node --import tsx support/template-database.ts drop <name>
 */

async function create(): Promise<void> {
  const database = await createTestDatabase();
  try {
    await migrateAll({ ...process.env, NODE_ENV: 'development', DATABASE_URL: database.url });
  } catch (err) {
    await database.drop();
    throw err;
  }
  process.stdout.write(`${new URL(database.url).pathname.slice(1)}\n`);
}

async function drop(name: string | undefined): Promise<void> {
  if (name === undefined) throw new Error('name the database to drop');
  await dropDatabase(name);
}

const [command, name] = process.argv.slice(2);
(command === 'create'
  ? create()
  : command === 'drop'
    ? drop(name)
    : Promise.reject(new Error(`unknown command ${command}`))
).catch((err: unknown) => {
  process.stderr.write(`template database: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
