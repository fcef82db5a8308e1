import { connectBus } from '@payments/bus';
import { QueueGroups, Streams, type ProviderKind } from '@payments/contracts';
import { isDatabaseUnavailable, openServiceDatabase } from '@payments/db';
import { migrationsCheck, natsCheck, postgresCheck } from '@payments/health';
import { createLogger, type Logger } from '@payments/logger';
import { createMetricsRegistry, jobStreamMetrics, outboxLimitGauges } from '@payments/metrics';
import { OutboxRelay, outboxBacklogSummary } from '@payments/outbox';
import type { ReceivablesConfig } from './config';
import { migrations, SCHEMA } from './db/migrations';
import type { ReceivablesDatabase } from './db/schema';
import type { PaymentProviders } from './domain/ports';
import { PostgresProviderAccounts } from './db/provider-accounts';
import { createPaymentProviders } from './provider/providers';
import { busNewestCredentials } from './transport/credential-directory';
import { SignedSlipLinks } from './provider/slip-links';
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

/** Starts receivables-svc: gateway requests, registration and cancellation workers, outbox relay, statistics rollup, provider webhooks. */
export async function startReceivablesService(
  config: ReceivablesConfig,
  logger: Logger = createLogger('receivables-svc', config.logLevel),
): Promise<RunningReceivablesService> {
  // Migrated beforehand (`npm run migrate`): only checked here, the start refused in one line otherwise.
  const db = await openServiceDatabase<ReceivablesDatabase>({
    url: config.databaseUrl,
    schema: SCHEMA,
    applicationName: 'receivables-svc',
    poolSize: config.databasePoolSize,
    migrations,
    logger,
  });
  const bus = await connectBus({
    url: config.natsUrl,
    prefix: config.busPrefix,
    name: 'receivables-svc',
    // Its own NATS user and reply inboxes (_INBOX_receivables-svc): see deploy/nats.
    credentials: config,
    // JOB_MAX_FAILURES, STREAM_MAX_BYTES.
    streamSettings: config,
    // Postgres away is an outage, not a failure of the job: retried without counting (JOB_MAX_FAILURES).
    isOutage: isDatabaseUnavailable,
    logger,
    timeoutMs: config.busTimeoutMs,
    serveConcurrency: config.busServeConcurrency,
  });
  const outboxStreams = [Streams.receivableRegistrations, Streams.receivableCancellations, Streams.callbackRequests];
  // What it writes (through its outbox) or reads, provisioned by `npm run admin -- bus provision`:
  // only checked here (it may not create them), and the start refused, naming what is missing or weaker.
  await bus.streams.check(QueueGroups.receivables).catch(async (err: unknown) => {
    // Nothing else runs yet: an in-process start (the e2e tests) leaves no pool or connection behind.
    await bus.close();
    await db.destroy();
    throw err;
  });

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
  const providers = createPaymentProviders(config, busNewestCredentials(bus), db, interMetrics(metrics, logger));
  const accounts = new PostgresProviderAccounts(db);
  const payments = paymentMetrics(metrics);
  reconciliationMetrics(metrics, { db, logger, sweptKinds: sweptProviderKinds(providers) });
  // Bank notices are stored by the webhook route and applied here; reconciliation stores what notices missed.
  const notices = startNoticeWorker({
    db,
    providers,
    accounts,
    timeZone: config.timeZone,
    logger,
    observer: payments,
    onEnqueued,
  });
  const reconciler = startReconciler({
    db,
    providers,
    accounts,
    logger,
    intervalMs: config.providerReconcileIntervalMs,
    onNotice: () => notices.wake(),
  });
  const slipLinks = new SignedSlipLinks(config);
  registerHandlers(bus, {
    db,
    clients: new BusClientDirectory(bus),
    providers,
    accounts,
    timeZone: config.timeZone,
    onEnqueued,
  });
  relay.start();
  const rollup = startRegistrationRollup(db, logger);
  // Monthly history partitions created ahead and dropped past retention; the state counters folded.
  const upkeep = startDataUpkeep({ db, logger, historyRetentionDays: config.receivableHistoryRetentionDays });
  const workers = await startWorkers(bus, {
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
  });
  // What runs without the HTTP server, stopped in one place: by stop(), and when the server cannot
  // start (its port taken), so an in-process start (the e2e tests) leaves nothing running.
  const stopBackground = async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await relay.stop();
    await rollup.stop();
    await upkeep.stop();
    await reconciler.stop();
    await notices.stop();
    await providers.close();
    await bus.close();
    await db.destroy();
  };
  const http = await startProviderWebhookServer({
    db,
    accounts,
    port: config.port,
    providerWebhookSecret: config.provider.webhookSecret,
    timeZone: config.timeZone,
    logger,
    onEnqueued,
    onNotice: () => notices.wake(),
    paymentMetrics: payments,
    readiness: [postgresCheck(db), natsCheck(bus.connection), migrationsCheck(db, SCHEMA, Object.keys(migrations))],
    metrics,
  }).catch(async (err: unknown) => {
    await stopBackground().catch((stopErr: unknown) => logger.error({ err: stopErr }, 'stopping after a failed start'));
    throw err;
  });
  logger.info(
    { busPrefix: config.busPrefix, port: http.port, sandbox: config.provider.baseUrl, inter: config.inter.baseUrl },
    'receivables-svc ready',
  );

  return {
    port: http.port,
    url: `http://127.0.0.1:${http.port}`,
    async stop() {
      await http.stop();
      await stopBackground();
    },
  };
}

/** The provider kinds whose lists reconciliation sweeps (those whose adapter can sweep). */
function sweptProviderKinds(providers: PaymentProviders): ProviderKind[] {
  return (Object.keys(providers) as ProviderKind[]).filter((kind) => providers[kind].sweep !== undefined);
}
