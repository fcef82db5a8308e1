import { connect, type ConnectionOptions, type NatsConnection } from 'nats';
import type { Logger } from '@payments/logger';
import { authOptions, CredsFileError, type NatsCredentials } from './auth';
import { inboxPrefixOf } from './inbox';
import { isNoResponders, isTransientJetStreamError, retryTransient } from './jetstream-retry';
import { acceptsWrongLogin, wrongLogin } from './login-check';
import { natsServers } from './servers';

/**
 * Why a service cannot use NATS, said in one line that names the URL and what to do: NATS out of
 * reach, a refused login (or a creds file that cannot be read), a failed TLS handshake, a server
 * without JetStream (every service needs it), or, in production, a server that checks no logins.
 */
export type BusProblem = 'unreachable' | 'login_refused' | 'tls_failed' | 'no_jetstream' | 'login_unchecked';

export class BusUnavailableError extends Error {
  override readonly name = 'BusUnavailableError';
  /** The message alone tells the operator what is wrong and what to do: logged without a stack. */
  readonly startupProblem = true;

  constructor(
    readonly problem: BusProblem,
    message: string,
    /** The NATS URL with any password or token masked. */
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The server URL(s) as they may be printed: credentials masked. */
export function displayNatsUrl(url: string): string {
  return natsServers(url)
    .map((one) =>
      one.replace(
        /^([a-z]+:\/\/)([^@/]+)@/i,
        (_, scheme: string, auth: string) => `${scheme}${auth.includes(':') ? `${auth.split(':')[0]}:***` : '***'}@`,
      ),
    )
    .join(',');
}

/** Translates an error of nats' connect() into a BusUnavailableError; anything else comes back unchanged. */
export function explainNatsConnectError(err: unknown, url: string): unknown {
  const shown = displayNatsUrl(url);
  if (err instanceof CredsFileError)
    return new BusUnavailableError('login_refused', `${err.message}: fix NATS_CREDS`, shown, { cause: err });
  const e = err as { code?: string; hostname?: string; message?: string };
  const unreachable = (why: string) =>
    new BusUnavailableError(
      'unreachable',
      `cannot reach NATS at ${shown} (${why}): start nats-server -js or set NATS_URL`,
      shown,
      { cause: err },
    );
  switch (e?.code) {
    case 'CONNECTION_REFUSED':
    case 'ECONNREFUSED':
      return unreachable('connection refused');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return unreachable(`host ${e.hostname ?? 'name'} not found`);
    case 'TIMEOUT':
    case 'ETIMEDOUT':
      return unreachable('no answer: is that port NATS?');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return unreachable('host unreachable');
    case 'AUTHORIZATION_VIOLATION':
    case 'AUTHENTICATION_EXPIRED':
      return new BusUnavailableError(
        'login_refused',
        `NATS at ${shown} refused the login (${e.code}): fix NATS_USER and NATS_PASSWORD, or NATS_CREDS`,
        shown,
        { cause: err },
      );
  }
  if (e?.code === 'SERVER_OPT_NA' && e.message === 'tls')
    return new BusUnavailableError(
      'tls_failed',
      `NATS at ${shown} does not offer TLS: give it a tls block, or unset NATS_TLS_CA_FILE, NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE`,
      shown,
      { cause: err },
    );
  // Node's certificate checks (UNABLE_TO_VERIFY_LEAF_SIGNATURE, CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID...).
  if (typeof e?.code === 'string' && /CERT|TLS|SSL|VERIFY/.test(e.code))
    return new BusUnavailableError(
      'tls_failed',
      `TLS to NATS at ${shown} failed (${e.code}): check NATS_TLS_CA_FILE, NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE`,
      shown,
      { cause: err },
    );
  return err;
}

/**
 * Fails with a BusUnavailableError when the server has JetStream turned off (no responders, or a 503
 * API error other than a cluster's "temporarily unavailable"). A cluster without a meta leader yet,
 * or a request that times out, is tried again (retryTransient, logged when a logger is given).
 */
export async function requireJetStream(
  connection: NatsConnection,
  url: string,
  retry: { logger?: Logger; budgetMs?: number } = {},
): Promise<void> {
  try {
    await retryTransient('the account check ($JS.API.INFO)', () => connection.jetstreamManager(), {
      ...retry,
      // No responders here is a server without JetStream, not one still starting: said at once.
      isTransient: (err) => isTransientJetStreamError(err) && !isNoResponders(err),
    });
  } catch (err) {
    if ((err as { code?: string }).code === '503') {
      const shown = displayNatsUrl(url);
      throw new BusUnavailableError(
        'no_jetstream',
        `NATS at ${shown} has JetStream turned off: restart it as nats-server -js (or enable jetstream in its config)`,
        shown,
        { cause: err },
      );
    }
    throw err;
  }
}

/**
 * In production, fails with a BusUnavailableError (login_unchecked) when the server lets in a login
 * it should refuse (login-check.ts): such a server checks no passwords, so anyone who reaches it may
 * act as any service, and the per-service users of deploy/nats protect nothing. `options` are those
 * the service connected with; outside production, or without a login, nothing is checked.
 */
export async function requireCheckedLogins(
  options: ConnectionOptions,
  credentials: NatsCredentials | undefined,
  url: string,
): Promise<void> {
  const wrong = wrongLogin(credentials);
  if (wrong === undefined) return;
  const accepted = await acceptsWrongLogin(options, wrong).catch((err: unknown) => {
    throw explainNatsConnectError(err, url);
  });
  if (!accepted) return;
  const shown = displayNatsUrl(url);
  throw new BusUnavailableError(
    'login_unchecked',
    `NATS at ${shown} let ${wrong.who} in: it checks no logins, so anyone who reaches it may act as any service. Give it the users of deploy/nats (or an operator, with NATS_CREDS) before starting in production`,
    shown,
  );
}

/** Whose login a preflight check uses: a service's credentials and name (its reply inboxes). */
export interface CheckBusOptions {
  timeoutMs?: number;
  credentials?: NatsCredentials;
  /** The service whose user logs in: its inboxes must be the ones the server lets that user read. */
  name?: string;
}

/**
 * Connects (with the given login and TLS, if any), checks JetStream and disconnects: `npm start` asks
 * this before it starts any app, so a missing NATS is one clear line rather than six failed starts.
 */
export async function checkBus(url: string, opts: CheckBusOptions = {}): Promise<void> {
  const name = opts.name ?? 'preflight';
  let connection: NatsConnection;
  let options: ConnectionOptions;
  try {
    const auth = await authOptions(opts.credentials);
    options = {
      servers: natsServers(url),
      name,
      inboxPrefix: inboxPrefixOf(name),
      timeout: opts.timeoutMs ?? 5_000,
      // Not 0: nats.js (2.29) then drops two servers per failed one at start, and a list whose
      // first server tried is down fails though another is up. The check closes at once anyway.
      maxReconnectAttempts: -1,
      ...auth,
    };
    connection = await connect(options);
  } catch (err) {
    throw explainNatsConnectError(err, url);
  }
  try {
    await requireCheckedLogins(options, opts.credentials, url);
    // A preflight: a cluster not ready is waited for no longer than a connection attempt.
    await requireJetStream(connection, url, { budgetMs: opts.timeoutMs ?? 5_000 });
  } finally {
    await connection.close().catch(() => undefined);
  }
}
