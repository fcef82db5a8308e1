import { connectBus, serviceBusOptions } from '@payments/bus';
import { QueueGroups } from '@payments/contracts';
import { openServiceDatabaseIn } from '@payments/db';
import { openOpsServer } from '@payments/health';
import { startService } from '@payments/lifecycle';
import { createLogger, type Logger } from '@payments/logger';
import { createMetricsRegistry, metricsEndpoint } from '@payments/metrics';
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
    const db = await openServiceDatabaseIn<ClientsDatabase>(scope, {
      url: config.databaseUrl,
      schema: SCHEMA,
      applicationName: 'clients-svc',
      poolSize: config.databasePoolSize,
      migrations,
      logger,
    });
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
    const ops = await openOpsServer(scope, {
      port: config.port,
      db,
      nats: bus.connection,
      schema: SCHEMA,
      migrations,
      ...metricsEndpoint(metrics),
    });
    logger.info({ busPrefix: config.busPrefix, port: ops.port }, 'clients-svc ready');
    return { port: ops.port, url: ops.url };
  });
}
