import { connectBus, serviceBusOptions } from '@payments/bus';
import { QueueGroups, Streams } from '@payments/contracts';
import { openServiceDatabaseIn } from '@payments/db';
import { openOpsServer } from '@payments/health';
import { startPeriodic, startService } from '@payments/lifecycle';
import { startLogMaintenance } from './db/log-upkeep';
import { createLogger, type Logger } from '@payments/logger';
import { createMetricsRegistry, jobStreamMetrics, metricsEndpoint } from '@payments/metrics';
import type { CallbackConfig } from './config';
import { migrations, SCHEMA } from './db/migrations';
import type { CallbacksDatabase } from './db/schema';
import { DeliveryStatsStore } from './db/delivery-stats-store';
import { DeliveryEngine, type AttemptListener } from './domain/delivery-engine';
import { rollUpDeliveries, ROLLUP_INTERVAL_MS } from './domain/delivery-stats';
import { EventStore } from './domain/event-store';
import { WorkerRegistry } from './domain/worker-registry';
import { createHttpDelivery } from './transport/undici-http-delivery';
import { registerHandlers } from './transport/handlers';
import { startWorkers } from './transport/ingest';
import { otelDeliveryTracing } from './transport/otel-delivery-tracing';
import { callbackMetrics } from './transport/metrics';
import { BusSigningSecrets } from './transport/signing-secrets';

export interface RunningCallbackService {
  /** Port and base URL of the ops server (/healthz, /readyz, /metrics). */
  port: number;
  url: string;
  stop(): Promise<void>;
}

/** Starts callback-svc: takes callback requests off JetStream and delivers them, signed and retried. */
export function startCallbackService(
  config: CallbackConfig,
  logger: Logger = createLogger('callback-svc', config.logLevel),
  onAttempt?: AttemptListener,
): Promise<RunningCallbackService> {
  return startService(async (scope) => {
    // Migrated beforehand (`npm run migrate`): only checked here, the start refused in one line otherwise.
    const db = await openServiceDatabaseIn<CallbacksDatabase>(scope, {
      url: config.databaseUrl,
      schema: SCHEMA,
      applicationName: 'callback-svc',
      poolSize: config.databasePoolSize,
      migrations,
      logger,
    });
    // Closed after the bus: deliveries in flight end before their connections do.
    const http = await scope.open(
      'callback connections',
      () =>
        createHttpDelivery({
          timeoutMs: config.timeoutMs,
          policy: config.nodeEnv === 'production' ? 'public-only' : 'allow-private',
          dnsServers: config.dnsServers,
        }),
      (delivery) => delivery.close(),
    );
    const bus = await scope.open(
      'bus',
      () => connectBus(serviceBusOptions(config, 'callback-svc', logger)),
      (opened) => opened.close(),
    );
    // The one stream it reads, its consumer, the dead letters and its claim store, provisioned by
    // `npm run admin -- bus provision`: only checked here (it may not create them), the start refused otherwise.
    await bus.streams.check(QueueGroups.callbacks);
    const store = new EventStore(db);
    const metrics = createMetricsRegistry('callback-svc');
    jobStreamMetrics(metrics, {
      source: bus.streams,
      streams: [Streams.callbackRequests],
      consumed: [Streams.callbackRequests.name],
      logger,
    });
    // The engine is made below; the gauge reads it only at scrape time.
    const observed = callbackMetrics({
      registry: metrics,
      store,
      logger,
      heldCount: () => engine.heldCount,
      failingHostCount: () => engine.failingHostCount,
    });
    const engine = new DeliveryEngine({
      store,
      workers: new WorkerRegistry(db),
      http,
      secrets: new BusSigningSecrets(bus),
      retry: { scheduleMs: config.retryScheduleMs, jitterPercent: config.retryJitterPercent },
      limits: {
        concurrency: config.concurrency,
        hostConcurrency: config.hostConcurrency,
        tenantSharePercent: config.tenantSharePercent,
        maxHeld: config.maxHeld,
        maxHeldPerHost: config.maxHeldPerHost,
        leaseMs: config.leaseMs,
        timeoutMs: config.timeoutMs,
        pollIntervalMs: config.pollIntervalMs,
      },
      logger,
      onAttempt: (event, status, error) => {
        observed.onAttempt(event, status, error);
        onAttempt?.(event, status, error);
      },
      tracing: otelDeliveryTracing,
    });
    const stats = new DeliveryStatsStore(db);
    registerHandlers(bus, { store, stats, onRetry: () => engine.wake() });
    await scope.open(
      'delivery engine',
      () => engine.start(),
      () => engine.stop(),
    );
    // The delivery log's days created ahead and dropped past CALLBACK_RETENTION_DAYS, on every instance.
    await scope.open(
      'log maintenance',
      () => startLogMaintenance(db, config.retentionDays, logger),
      (maintenance) => maintenance.stop(),
    );
    // Every instance runs it; the advisory lock lets one at a time do the work.
    await scope.open(
      'delivery stats rollup',
      () =>
        startPeriodic(() => rollUpDeliveries(stats), {
          intervalMs: ROLLUP_INTERVAL_MS,
          logger,
          what: 'delivery stats rollup',
          runAtStart: true,
        }),
      (rollup) => rollup.stop(),
    );
    await scope.open(
      'workers',
      () => startWorkers(bus, { engine, logger }),
      (workers) => Promise.all(workers.map((w) => w.stop())),
    );
    const ops = await openOpsServer(scope, {
      port: config.port,
      db,
      nats: bus.connection,
      schema: SCHEMA,
      migrations,
      ...metricsEndpoint(metrics),
    });
    logger.info(
      { busPrefix: config.busPrefix, nodeEnv: config.nodeEnv, schedule: config.retryScheduleMs, port: ops.port },
      'callback-svc ready',
    );
    return { port: ops.port, url: ops.url };
  });
}
