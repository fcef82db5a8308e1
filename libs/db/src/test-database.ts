import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { assertIdentifier } from './database';

/**
 * A throw-away database for one test run, so test projects running in parallel never share state.
 * Returns its URL and a drop function (which also closes leftover connections). With `template`, a
 * copy of that database (CREATE DATABASE ... TEMPLATE): an already migrated one saves each system of
 * the e2e suite its migrations.
 */
export async function createTestDatabase(
  baseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  template?: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  if (template !== undefined) assertIdentifier(template);
  const name = `test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new URL(baseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`create database "${name}"${template === undefined ? '' : ` template "${template}"`}`);
  await client.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}
