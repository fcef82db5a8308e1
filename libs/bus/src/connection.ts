import { connect, type ConnectionOptions, type NatsConnection } from 'nats';
import type { Logger } from '@payments/logger';
import { authOptions, type NatsCredentials } from './auth';
import { inboxPrefixOf } from './inbox';
import { natsServers } from './servers';
import { explainNatsConnectError, requireCheckedLogins, requireJetStream } from './unavailable';

/** What connectBus needs to open a connection. */
export interface ConnectionSettings {
  /** The NATS server, or a comma-separated list of a cluster's (NATS_URL; see natsServers). */
  url: string;
  /** Connection name, shown by the NATS server's monitoring. */
  name: string;
  credentials?: NatsCredentials;
  /** Subject prefix of this connection's reply inboxes; default inboxPrefixOf(name). */
  inboxPrefix?: string;
  /** Where the JetStream check's retries (a cluster not ready at start) are logged. */
  logger?: Logger;
}

/**
 * How often a bus connection pings its server, and how many pings may go unanswered before it drops
 * the server and reconnects (to another of the cluster's, docs/architecture.md). A server whose machine
 * vanished (no FIN, no RST: power lost, network cut, VM frozen) leaves the socket open; with nats.js's
 * default of one ping every 2 minutes such a connection hangs, its requests and publishes unanswered,
 * for minutes. At 10 s and 2, a vanished server is dropped 20-30 s after its last answer.
 */
export const NATS_PING_INTERVAL_MS = 10_000;
export const NATS_MAX_PINGS_OUT = 2;

/**
 * The options of every bus connection: reconnect for ever, every half second, after a lost server,
 * and a silent server is taken as lost after NATS_MAX_PINGS_OUT pings NATS_PING_INTERVAL_MS apart.
 */
export function connectionOptions(settings: ConnectionSettings): ConnectionOptions {
  return {
    servers: natsServers(settings.url),
    name: settings.name,
    inboxPrefix: settings.inboxPrefix ?? inboxPrefixOf(settings.name),
    maxReconnectAttempts: -1,
    // No stack capture per request: measurable on hot paths (JetStream publishes, pulls).
    noAsyncTraces: true,
    reconnectTimeWait: 500,
    pingInterval: NATS_PING_INTERVAL_MS,
    maxPingOut: NATS_MAX_PINGS_OUT,
  };
}

/**
 * Connects, makes sure in production that the server checks logins (requireCheckedLogins: the
 * credentials carry the run mode, as a service passes its config), and checks that the server runs
 * JetStream (every service needs it). Each failure at start-up is a BusUnavailableError: one line
 * naming NATS_URL and the fix, rather than a NatsError stack.
 */
export async function openConnection(settings: ConnectionSettings): Promise<NatsConnection> {
  const explain = (err: unknown) => {
    throw explainNatsConnectError(err, settings.url);
  };
  const options = await authOptions(settings.credentials)
    .then((auth): ConnectionOptions => ({ ...connectionOptions(settings), ...auth }))
    .catch(explain);
  const connection = await connect(options).catch(explain);
  try {
    await requireCheckedLogins(options, settings.credentials, settings.url);
    await requireJetStream(connection, settings.url, { logger: settings.logger });
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
  return connection;
}
