import { connectBus, serviceBusOptions } from '@payments/bus';
import { QueueGroups, Streams, type ProviderKind } from '@payments/contracts';
import { isDatabaseUnavailable, openServiceDatabaseIn } from '@payments/db';
import { serviceChecks } from '@payments/health';
import { startService } from '@payments/lifecycle';
import { createLogger, type Logger } from '@payments/logger';
import { createMetricsRegistry, jobStreamMetrics, outboxLimitGauges } from '@payments/metrics';
import { OutboxRelay, outboxBacklogSummary } from '@payments/outbox';
import type { ReceivablesConfig } from './config';
import { migrations, SCHEMA } from './db/migrations';
import type { ReceivablesDatabase } from './db/schema';
import type { PaymentProviders } from './domain/ports';
import { PostgresProviderAccounts } from './db/provider-accounts';
import { createPaymentProviders } from './transport/providers/providers';
import { busNewestCredentials } from './transport/credential-directory';
import { SignedSlipLinks } from './transport/providers/slip-links';
import { registerHandlers } from './transport/bus-handlers';
import { BusClientDirectory } from './transport/client-directory';
import { startProviderWebhookServer } from './transport/http-server';
import { interMetrics } from './transport/inter-metrics';
import { paymentMetrics, receivablesMetrics, reconciliationMetrics } from './transport/metrics';
import { startNoticeWorker } from './transport/notice-worker';
import { startReconciler } from './transport/reconciler';
import { stuckRegistrationMetrics } from './transport/stuck-metrics';
import { watchRegistrationWaits } from './domain/registration-waits';
import { startRegistrationRollup } from './transport/rollup';
import { startDataUpkeep } from './transport/upkeep';
import { startWorkers } from './transport/workers';

export interface RunningReceivablesService {
  /** Port of the provider webhook endpoint, which also serves /healthz, /readyz, /metrics. */
  port: number;
  /** e.g. http://127.0.0.1:3200 */
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts receivables-svc: gateway requests, registration and cancellation workers, outbox relay,
 * statistics rollup, provider webhooks. Stopped (or after a failed start) in the reverse order: the
 * webhook server first, the database last.
 */
export function startReceivablesService(
  config: ReceivablesConfig,
  logger: Logger = createLogger('receivables-svc', config.logLevel),
): Promise<RunningReceivablesService> {
  return startService(async (scope) => {
    // Migrated beforehand (`npm run migrate`): only checked here, the start refused in one line otherwise.
    const db = await openServiceDatabaseIn<ReceivablesDatabase>(scope, {
      url: config.databaseUrl,
      schema: SCHEMA,
      applicationName: 'receivables-svc',
      poolSize: config.databasePoolSize,
      migrations,
      logger,
    });
    const bus = await scope.open(
      'bus',
      () =>
        connectBus({
          ...serviceBusOptions(config, 'receivables-svc', logger),
          // Postgres away is an outage, not a failure of the job: retried without counting (JOB_MAX_FAILURES).
          isOutage: isDatabaseUnavailable,
        }),
      (opened) => opened.close(),
    );
    const outboxStreams = [Streams.receivableRegistrations, Streams.receivableCancellations, Streams.callbackRequests];
    // What it writes (through its outbox) or reads, provisioned by `npm run admin -- bus provision`:
    // only checked here (it may not create them), and the start refused, naming what is missing or weaker.
    await bus.streams.check(QueueGroups.receivables);

    const relay = new OutboxRelay({ db, bus, streams: outboxStreams, logger, maxRows: config.outboxMaxRows });
    const metrics = createMetricsRegistry('receivables-svc');
    const observed = receivablesMetrics(metrics, { db, logger, outboxStreams: outboxStreams.map((s) => s.name) });
    jobStreamMetrics(metrics, {
      source: bus.streams,
      streams: outboxStreams,
      consumed: [Streams.receivableRegistrations.name, Streams.receivableCancellations.name],
      logger,
    });
    outboxLimitGauges(metrics, { maxRows: config.outboxMaxRows, summary: () => outboxBacklogSummary(db), logger });
    stuckRegistrationMetrics(metrics, { db, logger });
    const onEnqueued = () => relay.wake();
    const providers = await scope.open(
      'bank providers',
      () => createPaymentProviders(config, busNewestCredentials(bus), db, interMetrics(metrics, logger)),
      (opened) => opened.close(),
    );
    const accounts = new PostgresProviderAccounts(db);
    const payments = paymentMetrics(metrics);
    reconciliationMetrics(metrics, { db, logger, sweptKinds: sweptProviderKinds(providers) });
    // Bank notices are stored by the webhook route and applied here; reconciliation stores what notices missed.
    const notices = await scope.open(
      'notice worker',
      () =>
        startNoticeWorker({
          db,
          providers,
          accounts,
          timeZone: config.timeZone,
          logger,
          observer: payments,
          onEnqueued,
        }),
      (worker) => worker.stop(),
    );
    await scope.open(
      'reconciler',
      () =>
        startReconciler({
          db,
          providers,
          accounts,
          logger,
          intervalMs: config.providerReconcileIntervalMs,
          onNotice: () => notices.wake(),
        }),
      (reconciler) => reconciler.stop(),
    );
    const slipLinks = new SignedSlipLinks(config);
    registerHandlers(bus, {
      db,
      clients: new BusClientDirectory(bus),
      providers,
      accounts,
      timeZone: config.timeZone,
      onEnqueued,
    });
    // Monthly history partitions created ahead and dropped past retention; the state counters folded.
    await scope.open(
      'data upkeep',
      () => startDataUpkeep({ db, logger, historyRetentionDays: config.receivableHistoryRetentionDays }),
      (upkeep) => upkeep.stop(),
    );
    await scope.open(
      'registration rollup',
      () => startRegistrationRollup(db, logger),
      (rollup) => rollup.stop(),
    );
    await scope.open(
      'outbox relay',
      () => relay.start(),
      () => relay.stop(),
    );
    await scope.open(
      'workers',
      () =>
        startWorkers(bus, {
          db,
          // Each attempt a bank does not take is recorded on its charges: the health page, metric and history show it.
          providers: watchRegistrationWaits(providers, db, logger),
          accounts,
          slipLinks,
          logger,
          observer: observed.registration,
          registrationConcurrency: config.registrationConcurrency,
          onNotice: () => notices.wake(),
          onEnqueued,
        }),
      (workers) => Promise.all(workers.map((w) => w.stop())),
    );
    const http = await scope.open(
      'webhook server',
      () =>
        startProviderWebhookServer({
          db,
          accounts,
          port: config.port,
          providerWebhookSecret: config.provider.webhookSecret,
          timeZone: config.timeZone,
          logger,
          onEnqueued,
          onNotice: () => notices.wake(),
          paymentMetrics: payments,
          readiness: serviceChecks({ db, nats: bus.connection, schema: SCHEMA, migrations }),
          metrics,
        }),
      (server) => server.stop(),
    );
    logger.info(
      { busPrefix: config.busPrefix, port: http.port, sandbox: config.provider.baseUrl, inter: config.inter.baseUrl },
      'receivables-svc ready',
    );
    return { port: http.port, url: `http://127.0.0.1:${http.port}` };
  });
}

/** The provider kinds whose lists reconciliation sweeps (those whose adapter can sweep). */
function sweptProviderKinds(providers: PaymentProviders): ProviderKind[] {
  return (Object.keys(providers) as ProviderKind[]).filter((kind) => providers[kind].sweep !== undefined);
}
