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

it('migrateToLatest leaves a schema that a newer version migrated as it is (rolling upgrade, rollback)', async () => {
  const test = await createTestDatabase();
  const db = createDatabase<unknown>({ url: test.url, schema: 'svc_b' });
  const first: Record<string, Migration> = {
    '0001_table': { up: async (d) => void (await d.schema.createTable('t').addColumn('a', 'integer').execute()) },
  };
  const newer: Record<string, Migration> = {
    ...first,
    '0002_column': { up: async (d) => void (await d.schema.alterTable('t').addColumn('b', 'integer').execute()) },
  };
  const diverged: Record<string, Migration> = {
    ...first,
    '0002_other': { up: async (d) => void (await d.schema.alterTable('t').addColumn('c', 'integer').execute()) },
  };
  try {
    expect(await migrateToLatest(db, 'svc_b', newer)).toEqual({ aheadBy: [] });
    // The previous version starts on the newer schema (Kysely's Migrator alone refuses: "missing").
    expect(await migrateToLatest(db, 'svc_b', first)).toEqual({ aheadBy: ['0002_column'] });
    await expect(migrateToLatest(db, 'svc_b', diverged)).rejects.toThrow(
      /svc_b has migrations this version does not know \(0002_column\) and lacks some it needs \(0002_other\)/,
    );
    const columns = await sql<{ column_name: string }>`
      select column_name from information_schema.columns where table_schema = 'svc_b' and table_name = 't' order by 1`.execute(
      db,
    );
    expect(columns.rows.map((r) => r.column_name)).toEqual(['a', 'b']);
  } finally {
    await db.destroy();
    await test.drop();
  }
});

it('survives a connection lost while a client is checked out between queries (Postgres restart)', async () => {
  const db = createDatabase<unknown>({ url: ADMIN, schema: 'public', poolSize: 2 });
  const admin = new pg.Client({ connectionString: ADMIN });
  await admin.connect();
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    await db
      .connection()
      .execute(async (conn) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(conn);
        await admin.query('select pg_terminate_backend($1)', [rows[0].pid]);
        // No query runs on the client when its connection goes: pg emits 'error' on the client itself.
        await new Promise((r) => setTimeout(r, 300));
        await sql`select 1`.execute(conn);
      })
      .then(
        () => {
          throw new Error('the query on the lost connection succeeded');
        },
        (err: Error) => expect(err.message).toMatch(/terminat|Connection|not queryable/i),
      );
    expect(uncaught).toEqual([]);
    // The pool goes on with a new connection.
    expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows).toEqual([{ one: 1 }]);
  } finally {
    process.off('uncaughtException', onUncaught);
    await admin.end();
    await db.destroy();
  }
});
