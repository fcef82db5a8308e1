import { connectBus } from '@payments/bus';
import { createDatabase, ensureDatabase, migrateToLatest } from '@payments/db';
import { migrationsCheck, natsCheck, postgresCheck, startOpsServer } from '@payments/health';
import { createLogger, type Logger } from '@payments/logger';
import { createMetricsRegistry, httpMetrics, metricsHandler, METRICS_PATH } from '@payments/metrics';
import type { ClientsConfig } from './config';
import type { ClientsDatabase } from './db/schema';
import { migrations, SCHEMA } from './db/migrations';
import { registerHandlers } from './transport/handlers';

export interface RunningClientsService {
  /** Port and base URL of the ops server (/healthz, /readyz, /metrics). */
  port: number;
  url: string;
  stop(): Promise<void>;
}

/** Starts clients-svc: migrates its schema, then answers client commands on the bus. */
export async function startClientsService(
  config: ClientsConfig,
  logger: Logger = createLogger('clients-svc', config.logLevel),
): Promise<RunningClientsService> {
  await ensureDatabase(config.databaseUrl);
  const db = createDatabase<ClientsDatabase>({
    url: config.databaseUrl,
    schema: SCHEMA,
    applicationName: 'clients-svc',
    poolSize: config.databasePoolSize,
  });
  await migrateToLatest(db, SCHEMA, migrations, logger);
  const bus = await connectBus({
    url: config.natsUrl,
    prefix: config.busPrefix,
    name: 'clients-svc',
    // Its own NATS user and reply inboxes (_INBOX_clients-svc): see deploy/nats.
    credentials: config,
    logger,
    timeoutMs: config.busTimeoutMs,
    serveConcurrency: config.busServeConcurrency,
    // STREAM_MAX_BYTES and STREAM_REPLICAS of the claim-check store, should a large reply create it.
    streamSettings: config,
  });
  registerHandlers(bus, { db });
  const metrics = createMetricsRegistry('clients-svc');
  const ops = await startOpsServer({
    port: config.port,
    checks: [postgresCheck(db), natsCheck(bus.connection), migrationsCheck(db, SCHEMA, Object.keys(migrations))],
    middleware: [httpMetrics(metrics)],
    routes: { [METRICS_PATH]: metricsHandler(metrics) },
  });
  logger.info({ busPrefix: config.busPrefix, port: ops.port }, 'clients-svc ready');
  return {
    port: ops.port,
    url: ops.url,
    async stop() {
      await ops.stop();
      await bus.close();
      await db.destroy();
    },
  };
}
