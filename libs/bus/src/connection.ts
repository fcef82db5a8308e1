import { connect, type ConnectionOptions, type NatsConnection } from 'nats';
import type { Logger } from '@payments/logger';
import { authOptions, type NatsCredentials } from './auth';
import { inboxPrefixOf } from './inbox';
import { natsServers } from './servers';
import { explainNatsConnectError, requireJetStream } from './unavailable';

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

/** The options of every bus connection: reconnect for ever, every half second, after a lost server. */
export function connectionOptions(settings: ConnectionSettings): ConnectionOptions {
  return {
    servers: natsServers(settings.url),
    name: settings.name,
    inboxPrefix: settings.inboxPrefix ?? inboxPrefixOf(settings.name),
    maxReconnectAttempts: -1,
    // No stack capture per request: measurable on hot paths (JetStream publishes, pulls).
    noAsyncTraces: true,
    reconnectTimeWait: 500,
  };
}

/**
 * Connects and checks that the server runs JetStream (every service needs it). Either failure at
 * start-up is a BusUnavailableError: one line naming NATS_URL and the fix, rather than a NatsError stack.
 */
export async function openConnection(settings: ConnectionSettings): Promise<NatsConnection> {
  const connection = await authOptions(settings.credentials)
    .then((auth) => connect({ ...connectionOptions(settings), ...auth }))
    .catch((err: unknown) => {
      throw explainNatsConnectError(err, settings.url);
    });
  await requireJetStream(connection, settings.url, { logger: settings.logger }).catch(async (err: unknown) => {
    await connection.close().catch(() => undefined);
    throw err;
  });
  return connection;
}
