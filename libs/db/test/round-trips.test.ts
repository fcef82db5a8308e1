import { sql } from 'kysely';
import pg from 'pg';
import { workCounts } from '@payments/metrics';
import { createDatabase, createTestDatabase } from '../src';

/**
 * Postgres's own count of commits in a database, read on one connection kept open: each read asks
 * its backend to report its own pending counts first, so between two reads that connection adds
 * exactly two commits (the first read's query and the second read's flush).
 */
class ServerCommits {
  static readonly OWN_COMMITS = 2;
  private readonly client: pg.Client;
  constructor(url: string) {
    this.client = new pg.Client({ connectionString: url });
  }
  async read(): Promise<number> {
    await this.client.query('select pg_stat_force_next_flush()');
    const { rows } = await this.client.query<{ n: string }>(
      'select xact_commit as n from pg_stat_database where datname = current_database()',
    );
    return Number(rows[0].n);
  }
  connect = () => this.client.connect();
  end = () => this.client.end();
}

/** Waits until only `keep` backends are connected to the database (a backend reports its counts as it exits). */
async function othersGone(url: string, watcher: pg.Client, keep: number): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  for (;;) {
    const { rows } = await watcher.query<{ n: string }>(
      'select count(*) as n from pg_stat_activity where datname = $1',
      [name],
    );
    if (Number(rows[0].n) <= keep) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('counts every statement a pool client sends, and the commits among them as Postgres counts them', async () => {
  const test = await createTestDatabase();
  const db = createDatabase<{ t: { id: number } }>({ url: test.url, schema: 'public', poolSize: 2 });
  try {
    const server = new ServerCommits(test.url);
    await server.connect();
    const serverBefore = await server.read();
    const statements = workCounts().dbStatements;
    const commits = workCounts().dbCommits;

    // Outside a transaction: 3 statements, 3 commits.
    await sql`create table t (id int primary key)`.execute(db);

    await db.insertInto('t').values({ id: 1 }).execute();
    await db.selectFrom('t').selectAll().execute();
    // A transaction: begin, 2 statements, commit = 4 statements, 1 commit.
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ id: 2 }).execute();
      await trx.updateTable('t').set({ id: 3 }).where('id', '=', 2).execute();
    });
    // A transaction rolled back: begin, 1 statement, rollback = 3 statements, no commit.
    await db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('t').values({ id: 4 }).execute();
        throw new Error('roll back');
      })
      .catch(() => undefined);
    // A savepoint rolled back inside a committed transaction: begin, savepoint, insert, rollback to,
    // insert, commit = 6 statements, 1 commit.
    const conn = await db.connection().execute(async (c) => {
      await sql`BEGIN`.execute(c);
      await sql`savepoint s`.execute(c);
      await sql`insert into t values (5)`.execute(c);
      await sql`ROLLBACK TO SAVEPOINT s`.execute(c);
      await sql`insert into t values (6)`.execute(c);
      await sql`COMMIT`.execute(c);
      return 'done';
    });
    expect(conn).toBe('done');

    expect(workCounts().dbStatements - statements).toBe(3 + 4 + 3 + 6);
    expect(workCounts().dbCommits - commits).toBe(3 + 1 + 1);

    // Postgres agrees, once the pool's backend has gone and reported.
    const counted = workCounts().dbCommits - commits;
    await db.destroy();
    const watcher = new pg.Client({ connectionString: new URL('/postgres', test.url).toString() });
    await watcher.connect();
    await othersGone(test.url, watcher, 1);
    await watcher.end();
    const serverAfter = await server.read();
    await server.end();
    // Postgres also counts the transaction a backend runs as it starts: the pool started one.
    expect(serverAfter - serverBefore - ServerCommits.OWN_COMMITS).toBe(counted + 1);
  } finally {
    await db.destroy().catch(() => undefined);
    await test.drop();
  }
});
