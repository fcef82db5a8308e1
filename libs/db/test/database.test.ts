import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Migration } from 'kysely';
import pg from 'pg';
import { createDatabase, createTestDatabase, ensureDatabase, migrateToLatest } from '../src';

const ADMIN = 'postgres://postgres@127.0.0.1:5432/postgres';

async function databaseExists(name: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: ADMIN });
  await c.connect();
  try {
    return (await c.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
  } finally {
    await c.end();
  }
}

it('ensureDatabase creates a missing database once, even when several services race', async () => {
  const name = `test_ensure_${randomBytes(4).toString('hex')}`;
  const url = `postgres://postgres@127.0.0.1:5432/${name}`;
  try {
    await Promise.all([ensureDatabase(url), ensureDatabase(url), ensureDatabase(url)]);
    expect(await databaseExists(name)).toBe(true);
    await ensureDatabase(url);
  } finally {
    const c = new pg.Client({ connectionString: ADMIN });
    await c.connect();
    await c.query(`drop database if exists "${name}" with (force)`);
    await c.end();
  }
});

it('migrateToLatest applies each migration exactly once when instances start together, in the service schema', async () => {
  const test = await createTestDatabase();
  const dbs: Kysely<unknown>[] = Array.from({ length: 3 }, () =>
    createDatabase<unknown>({ url: test.url, schema: 'svc_a' }),
  );
  const migrations: Record<string, Migration> = {
    '0001_counter': {
      async up(db) {
        await db.schema.createTable('runs').addColumn('n', 'integer').execute();
        await sql`insert into runs values (1)`.execute(db);
      },
    },
  };
  try {
    await Promise.all(dbs.map((db) => migrateToLatest(db, 'svc_a', migrations)));
    const rows = await sql<{ n: number }>`select n from svc_a.runs`.execute(dbs[0]);
    expect(rows.rows).toEqual([{ n: 1 }]);
  } finally {
    await Promise.all(dbs.map((db) => db.destroy()));
    await test.drop();
  }
});

it('refuses an unsafe schema name', () => {
  expect(() => createDatabase({ url: 'postgres://x@127.0.0.1/db', schema: 'a; drop table x' })).toThrow(/unsafe/);
});

it('opens at most poolSize connections however many queries wait (DATABASE_POOL_SIZE)', async () => {
  const db = createDatabase<unknown>({ url: ADMIN, schema: 'public', poolSize: 3 });
  try {
    const backends = await Promise.all(
      Array.from({ length: 9 }, () =>
        sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.1)`.execute(db).then((r) => r.rows[0].pid),
      ),
    );
    expect(new Set(backends).size).toBe(3);
  } finally {
    await db.destroy();
  }
});
