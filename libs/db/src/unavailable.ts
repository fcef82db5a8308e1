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
