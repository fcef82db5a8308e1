import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';

// NUMERIC and BIGINT come back as strings by default; money is handled in integer cents as BIGINT,
// which fits a JS number below 2^53 (our largest value, 9,999,999,999.99, is ~1e12 cents).
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));
// DATE is a calendar day, not an instant: keep 'YYYY-MM-DD' instead of a Date at local midnight.
pg.types.setTypeParser(pg.types.builtins.DATE, (value: string) => value);

export interface DatabaseOptions {
  url: string;
  /** The service's own schema: every unqualified table name resolves there. */
  schema: string;
  poolSize?: number;
  applicationName?: string;
}

/** A kysely instance whose connections search the service's own schema only. */
export function createDatabase<DB>(opts: DatabaseOptions): Kysely<DB> {
  assertIdentifier(opts.schema);
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.poolSize ?? 10,
    application_name: opts.applicationName ?? opts.schema,
    options: `-c search_path=${opts.schema}`,
    connectionTimeoutMillis: 5_000,
  });
  // An idle client losing its connection (Postgres restart) must not crash the process.
  pool.on('error', () => undefined);
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

/** Creates the database named in the URL when it does not exist (first start on a fresh machine). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  assertIdentifier(name);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`create database "${name}"`).catch((err: { code?: string }) => {
        // Several services start at once: another one may have created it a moment ago.
        if (err.code !== '42P04' && err.code !== '23505') throw err;
      });
    }
  } finally {
    await client.end();
  }
}

export function assertIdentifier(name: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`unsafe SQL identifier: ${name}`);
}
