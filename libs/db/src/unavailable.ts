/**
 * Why a service (or the admin CLI) cannot use its database, said in one line that names the URL and
 * what to do: the first contact with Postgres goes through here, so a newcomer with Postgres down or a
 * typo in DATABASE_URL reads the fix instead of a stack trace.
 */
export type DatabaseProblem = 'unreachable' | 'login_refused' | 'missing' | 'cannot_create';

export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
  /** The message alone tells the operator what is wrong and what to do: logged without a stack. */
  readonly startupProblem = true;

  constructor(
    readonly problem: DatabaseProblem,
    message: string,
    /** The database URL with its password masked. */
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The URL as it may be printed: the password, if any, masked. */
export function displayDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

/** The database name a URL points at. */
export function databaseNameOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
}

/**
 * Translates a pg error met while connecting to `url` (or creating its database) into a
 * DatabaseUnavailableError; anything it does not recognise comes back unchanged.
 */
export function explainConnectionError(err: unknown, url: string): unknown {
  const shown = displayDatabaseUrl(url);
  const e = err as { code?: string; message?: string; hostname?: string; address?: string; port?: number };
  const message = e?.message ?? String(err);
  const unreachable = (why: string) =>
    new DatabaseUnavailableError(
      'unreachable',
      `cannot reach PostgreSQL at ${shown} (${why}): start PostgreSQL or set DATABASE_URL`,
      shown,
      { cause: err },
    );
  switch (e?.code) {
    case 'ECONNREFUSED':
      return unreachable('connection refused');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return unreachable(`host ${e.hostname ?? new URL(url).hostname} not found`);
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return unreachable(e.code === 'ETIMEDOUT' ? 'no answer' : 'host unreachable');
    case 'ECONNRESET':
      return unreachable('the connection was reset: is that port PostgreSQL?');
    case '28P01': // invalid_password
    case '28000': // invalid_authorization_specification (unknown role, pg_hba.conf refusal)
      return new DatabaseUnavailableError(
        'login_refused',
        `PostgreSQL at ${shown} refused the login (${message}): fix the user or password in DATABASE_URL`,
        shown,
        { cause: err },
      );
    case '3D000': // invalid_catalog_name
      return new DatabaseUnavailableError(
        'missing',
        `database "${databaseNameOf(url)}" does not exist at ${shown}`,
        shown,
        { cause: err },
      );
    case '42501': // insufficient_privilege (create database)
      return new DatabaseUnavailableError(
        'cannot_create',
        `database "${databaseNameOf(url)}" does not exist at ${shown} and its user may not create it (${message}): create it (createdb ${databaseNameOf(url)}) or set DATABASE_URL`,
        shown,
        { cause: err },
      );
  }
  // pg's own wording for a connect timeout or a peer that is not PostgreSQL.
  if (/timeout/i.test(message)) return unreachable('no answer within the connection timeout');
  if (/Connection terminated unexpectedly/.test(message))
    return unreachable('the connection was closed at once: is that port PostgreSQL?');
  return err;
}

/** Socket errors that mean the database host cannot be reached or the connection broke. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** SQLSTATEs besides class 08 (connection exception) that mean the server will not serve us now. */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: the server is stopping (or our backend was terminated)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, shutting down, in recovery
  '53300', // too_many_connections
]);

/**
 * pg and pg-pool say some of it in words only: a connection lost or never made ("Connection
 * terminated unexpectedly", "... due to connection timeout"), the pool's wait for a connection
 * ("timeout exceeded when trying to connect"), a client that lost its connection earlier.
 */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable)/;

/**
 * Whether `err` says Postgres cannot be used right now (down, restarting, out of reach, out of
 * connections) rather than that a query failed on its own: the caller may answer "try again later"
 * (503) instead of an internal error. A pg AggregateError (one try per address) counts when any of
 * its errors does.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  if (err instanceof DatabaseUnavailableError) return err.problem === 'unreachable';
  const { code, message, errors } = err as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
  return Array.isArray(errors) && errors.some(isDatabaseUnavailable);
}
