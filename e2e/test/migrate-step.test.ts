import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { dropDatabase, npm } from '../support/launcher';

/**
 * `npm run migrate` as an operator runs it: a fresh database is created and every schema migrated,
 * one line each; a second run changes nothing and says so; each role's settings are what its own
 * connection shows.
 */
const database = `test_migrate_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const url = `postgres://postgres@127.0.0.1:5432/${database}`;
const SCHEMAS = ['bank_sandbox', 'booklets', 'callbacks', 'clients', 'gateway', 'receivables'];

afterAll(async () => {
  await dropDatabase(database);
});

async function migrate(): Promise<string[]> {
  const run = npm(['run', '-s', 'migrate'], { DATABASE_URL: url, NODE_ENV: 'development' });
  const { code } = await run.exit(120_000);
  expect({ code, output: run.output }).toMatchObject({ code: 0 });
  return run.stdout.split('\n').filter((l) => l.startsWith('[migrate] '));
}

it('creates the database and migrates every schema, then finds each up to date', async () => {
  const first = await migrate();
  expect(first.map((l) => l.split(':')[0].replace('[migrate] ', '')).sort()).toEqual(SCHEMAS);
  expect(first.every((l) => /: applied 0001_/.test(l))).toBe(true);
  const second = await migrate();
  expect(second.sort()).toEqual(SCHEMAS.map((s) => `[migrate] ${s}: up to date`));

  const client = new pg.Client({ connectionString: `postgres://receivables_svc@127.0.0.1:5432/${database}` });
  await client.connect();
  try {
    const shown = await client.query<Record<string, string>>(
      `select current_setting('search_path') as search_path, current_setting('statement_timeout') as statement_timeout,
              current_setting('idle_in_transaction_session_timeout') as idle, current_setting('lock_timeout') as lock_timeout`,
    );
    expect(shown.rows[0]).toEqual({
      search_path: 'receivables',
      statement_timeout: '30s',
      idle: '1min',
      lock_timeout: '10s',
    });
  } finally {
    await client.end();
  }
}, 300_000);
