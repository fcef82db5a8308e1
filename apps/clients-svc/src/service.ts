import { connectBus } from '@payments/bus';
import { QueueGroups } from '@payments/contracts';
import { openServiceDatabase } from '@payments/db';
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
  // Migrated beforehand (`npm run migrate`): only checked here, the start refused in one line otherwise.
  const db = await openServiceDatabase<ClientsDatabase>({
    url: config.databaseUrl,
    schema: SCHEMA,
    applicationName: 'clients-svc',
    poolSize: config.databasePoolSize,
    migrations,
    logger,
  });
  const bus = await connectBus({
    url: config.natsUrl,
    prefix: config.busPrefix,
    name: 'clients-svc',
    // Its own NATS user and reply inboxes (_INBOX_clients-svc): see deploy/nats.
    credentials: config,
    logger,
    timeoutMs: config.busTimeoutMs,
    serveConcurrency: config.busServeConcurrency,
    // STREAM_MAX_BYTES and STREAM_REPLICAS: the least its claim stores must have (the check below).
    streamSettings: config,
  });
  // The claim stores it reads (its own) and writes (its askers'), provisioned by `npm run admin -- bus
  // provision`: only checked here (it may not create them), the start refused otherwise.
  await bus.streams.check(QueueGroups.clients).catch(async (err: unknown) => {
    // Nothing else runs yet: an in-process start (the e2e tests) leaves no pool or connection behind.
    await bus.close();
    await db.destroy();
    throw err;
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
