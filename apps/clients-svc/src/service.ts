import { connectBus, serviceBusOptions } from '@payments/bus';
import { QueueGroups } from '@payments/contracts';
import { openServiceDatabase } from '@payments/db';
import { migrationsCheck, natsCheck, postgresCheck, startOpsServer } from '@payments/health';
import { startService } from '@payments/lifecycle';
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

/** Starts clients-svc: answers client commands on the bus, its schema migrated beforehand. */
export function startClientsService(
  config: ClientsConfig,
  logger: Logger = createLogger('clients-svc', config.logLevel),
): Promise<RunningClientsService> {
  return startService(async (scope) => {
    // Migrated beforehand (`npm run migrate`): only checked here, the start refused in one line otherwise.
    const db = await scope.open(
      'database',
      () =>
        openServiceDatabase<ClientsDatabase>({
          url: config.databaseUrl,
          schema: SCHEMA,
          applicationName: 'clients-svc',
          poolSize: config.databasePoolSize,
          migrations,
          logger,
        }),
      (opened) => opened.destroy(),
    );
    const bus = await scope.open(
      'bus',
      () => connectBus(serviceBusOptions(config, 'clients-svc', logger)),
      (opened) => opened.close(),
    );
    // The claim stores it reads (its own) and writes (its askers'), provisioned by `npm run admin -- bus
    // provision`: only checked here (it may not create them), the start refused otherwise.
    await bus.streams.check(QueueGroups.clients);
    registerHandlers(bus, { db });
    const metrics = createMetricsRegistry('clients-svc');
    const ops = await scope.open(
      'ops server',
      () =>
        startOpsServer({
          port: config.port,
          checks: [postgresCheck(db), natsCheck(bus.connection), migrationsCheck(db, SCHEMA, Object.keys(migrations))],
          middleware: [httpMetrics(metrics)],
          routes: { [METRICS_PATH]: metricsHandler(metrics) },
        }),
      (opened) => opened.stop(),
    );
    logger.info({ busPrefix: config.busPrefix, port: ops.port }, 'clients-svc ready');
    return { port: ops.port, url: ops.url };
  });
}
