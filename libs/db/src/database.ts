import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { countWork } from '@payments/metrics';
import { databaseNameOf, explainConnectionError } from './unavailable';

/** How long a first connection may take before Postgres counts as out of reach. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Quiet time after which a connection's socket sends TCP keep-alive probes. A connection waiting for
 * a long query's answer, or held between statements (a transaction, the migrations' lock), sends
 * nothing: to a primary whose machine vanished (no FIN, no RST) it would wait until the process ends,
 * and a NAT or firewall on the way may forget it. Set on the socket, never as a connection startup
 * parameter (poolers refuse or drop those). The probes' spacing and count are the kernel's
 * (net.ipv4.tcp_keepalive_intvl and _probes, 75 s and 9 by default on Linux: about 11 min before a
 * dead peer fails the query; a pod's sysctls may shorten them).
 */
export const DB_KEEPALIVE_IDLE_MS = 10_000;

// NUMERIC and BIGINT come back as strings by default; money is handled in integer cents as BIGINT,
// which fits a JS number below 2^53 (our largest value, 9,999,999,999.99, is ~1e12 cents).
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));
// DATE is a calendar day, not an instant: keep 'YYYY-MM-DD' instead of a Date at local midnight.
pg.types.setTypeParser(pg.types.builtins.DATE, (value: string) => value);

export interface DatabaseOptions {
  url: string;
  /**
   * The service's own schema. Unqualified table names resolve there through the search_path of the
   * role the URL logs in as (`<schema>_svc`, set by `npm run migrate`), never through a startup
   * option: a pooler in transaction mode drops those. assertServiceSchema checks it at start.
   */
  schema: string;
  poolSize?: number;
  applicationName?: string;
}

/** A kysely instance on the URL as given (its user is the service's role: see DatabaseOptions.schema). */
export function createDatabase<DB>(opts: DatabaseOptions): Kysely<DB> {
  assertIdentifier(opts.schema);
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.poolSize ?? 10,
    application_name: opts.applicationName ?? opts.schema,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: DB_KEEPALIVE_IDLE_MS,
  });
  // A client losing its connection (Postgres restarted, a failover) must not crash the process. The
  // pool listens on idle clients only (the 'error' below); a checked-out client between two queries
  // (a transaction, Kysely's connection()) emits 'error' with no listener, which Node throws. Its next
  // query fails instead, and the pool replaces the client when it is released.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    countStatements(client);
  });
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

/** Statements that open or close a transaction; anything else outside one commits on its own. */
const TRANSACTION_CONTROL = /^\s*(begin|start\s+transaction|commit|end|rollback)\b(\s+to\b)?/i;

/**
 * Counts each statement a pool client sends (db_statements_total) and each commit it asks for
 * (db_commits_total: a COMMIT, or a statement outside a transaction), for /metrics. Wraps the
 * client's query; what the statement does is untouched.
 */
function countStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  let inTransaction = false;
  const counted = (...args: unknown[]): unknown => {
    countWork('dbStatements');
    const [first] = args;
    const text = typeof first === 'string' ? first : (first as { text?: unknown } | undefined)?.text;
    const control = typeof text === 'string' ? TRANSACTION_CONTROL.exec(text) : null;
    // ROLLBACK TO SAVEPOINT stays inside the transaction.
    const verb = control && !control[2] ? control[1].toLowerCase() : undefined;
    if (verb === 'commit' || verb === 'end' || (!inTransaction && verb === undefined)) countWork('dbCommits');
    if (verb === 'begin' || verb?.startsWith('start')) inTransaction = true;
    else if (verb !== undefined) inTransaction = false;
    return query(...args);
  };
  client.query = counted as typeof client.query;
}

/**
 * Creates the database named in the URL when it does not exist (first start on a fresh machine).
 * Postgres out of reach, a refused login or a user that may not create databases fail with a
 * DatabaseUnavailableError whose message names the URL and the fix.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseNameOf(url);
  assertIdentifier(name);
  await withClient(maintenanceUrl(url), url, async (client) => {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`create database "${name}"`).catch((err: { code?: string }) => {
        // Several services start at once: another one may have created it a moment ago.
        if (err.code !== '42P04' && err.code !== '23505') throw err;
      });
    }
  });
}

/**
 * Connects to the server of the URL (its maintenance database, `postgres`) and answers a query,
 * creating nothing: a start's check that Postgres is there, which must leave nothing behind when the
 * start is refused for another reason. Fails with a DatabaseUnavailableError about `url`.
 */
export async function checkDatabaseServer(url: string): Promise<void> {
  assertIdentifier(databaseNameOf(url));
  await withClient(maintenanceUrl(url), url, (client) => client.query('select 1'));
}

/** The URL of the server's maintenance database, `postgres`: where a database is looked up and created. */
function maintenanceUrl(url: string): string {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  return admin.toString();
}

/**
 * Connects to the database of the URL (without creating it) and answers a query: for tools that
 * must use an existing database, such as the admin CLI. Fails with a DatabaseUnavailableError
 * (problem `missing` when the database does not exist).
 */
export async function checkDatabase(url: string, shownUrl: string = url): Promise<void> {
  assertIdentifier(databaseNameOf(url));
  await withClient(url, shownUrl, (client) => client.query('select 1'));
}

/**
 * One short-lived connection to `connectionUrl` for `work`; any failure comes back as a
 * DatabaseUnavailableError about `shownUrl` (the URL the operator set) when it is a connection problem.
 */
async function withClient(
  connectionUrl: string,
  shownUrl: string,
  work: (client: pg.Client) => Promise<unknown>,
): Promise<void> {
  const client = new pg.Client({ connectionString: connectionUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined); // a connection lost meanwhile fails the query instead
  try {
    await client.connect();
    await work(client);
  } catch (err) {
    throw explainConnectionError(err, shownUrl);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function assertIdentifier(name: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`unsafe SQL identifier: ${name}`);
}
