import { connectBus } from '@payments/bus';
import { BOOKLET_DOWNLOAD_PATH, QueueGroups, Streams } from '@payments/contracts';
import { isDatabaseUnavailable, openServiceDatabase } from '@payments/db';
import { migrationsCheck, natsCheck, postgresCheck, startOpsServer } from '@payments/health';
import { createLogger, type Logger } from '@payments/logger';
import {
  createMetricsRegistry,
  httpMetrics,
  metricsHandler,
  METRICS_PATH,
  jobStreamMetrics,
  outboxLimitGauges,
  outboxWaitingGauge,
} from '@payments/metrics';
import { OutboxRelay, outboxBacklog, outboxBacklogSummary } from '@payments/outbox';
import { signLink } from '@payments/signed-links';
import type { BookletConfig } from './config';
import { migrations, SCHEMA } from './db/migrations';
import type { BookletsDatabase } from './db/schema';
import { PostgresPdfStore, startBookletFileRetention } from './db/booklet-files';
import { BookletDownloads } from './domain/booklet-downloads';
import { BusInstallmentSource } from './transport/bus-sources';
import { registerHandlers } from './transport/handlers';
import { startWorkers } from './transport/workers';

export interface RunningBookletService {
  /** Port and base URL of the ops server (/healthz, /readyz, /metrics). */
  port: number;
  url: string;
  stop(): Promise<void>;
}

/** Starts booklet-svc: booklet requests, the build worker, the outbox relay. */
export async function startBookletService(
  config: BookletConfig,
  logger: Logger = createLogger('booklet-svc', config.logLevel),
): Promise<RunningBookletService> {
  // Migrated beforehand (`npm run migrate`): only checked here, the start refused in one line otherwise.
  const db = await openServiceDatabase<BookletsDatabase>({
    url: config.databaseUrl,
    schema: SCHEMA,
    applicationName: 'booklet-svc',
    poolSize: config.databasePoolSize,
    migrations,
    logger,
  });
  const bus = await connectBus({
    url: config.natsUrl,
    prefix: config.busPrefix,
    name: 'booklet-svc',
    // Its own NATS user and reply inboxes (_INBOX_booklet-svc): see deploy/nats.
    credentials: config,
    // JOB_MAX_FAILURES, STREAM_MAX_BYTES.
    streamSettings: config,
    // Postgres away is an outage, not a failure of the job: retried without counting (JOB_MAX_FAILURES).
    isOutage: isDatabaseUnavailable,
    logger,
    timeoutMs: config.busTimeoutMs,
    serveConcurrency: config.busServeConcurrency,
  });
  const outboxStreams = [Streams.bookletBuilds, Streams.callbackRequests];
  // What it writes (through its outbox) or reads, provisioned by `npm run admin -- bus provision`:
  // only checked here (it may not create them), and the start refused, naming what is missing or weaker.
  await bus.streams.check(QueueGroups.booklets).catch(async (err: unknown) => {
    // Nothing else runs yet: an in-process start (the e2e tests) leaves no pool or connection behind.
    await bus.close();
    await db.destroy();
    throw err;
  });
  const relay = new OutboxRelay({ db, bus, streams: outboxStreams, logger, maxRows: config.outboxMaxRows });
  const onEnqueued = () => relay.wake();
  const source = new BusInstallmentSource(bus);
  const store = new PostgresPdfStore(db, config.fileRetentionDays);
  const links = (bookletId: string) => {
    const { expires, signature } = signLink(
      config.downloadLinkSecret,
      bookletId,
      new Date(Date.now() + config.downloadLinkTtlSeconds * 1000),
    );
    return `${config.publicBaseUrl}${BOOKLET_DOWNLOAD_PATH}/${bookletId}?expires=${expires}&signature=${signature}`;
  };
  const downloads = new BookletDownloads({ db, source, store, logger });
  registerHandlers(bus, { db, source, downloads, onEnqueued });
  // Files past BOOKLET_FILE_RETENTION_DAYS dropped with their partition, partitions made ahead.
  const retention = startBookletFileRetention({ db, schema: SCHEMA, retentionDays: config.fileRetentionDays, logger });
  relay.start();
  const workers = await startWorkers(bus, {
    db,
    source,
    store,
    links,
    logger,
    maxWaitMs: config.maxWaitMs,
    onEnqueued,
  });
  const metrics = createMetricsRegistry('booklet-svc');
  outboxWaitingGauge(metrics, {
    streams: outboxStreams.map((s) => s.name),
    backlog: () => outboxBacklog(db),
    onError: (err) => logger.warn({ err }, 'could not count the outbox for /metrics'),
  });
  jobStreamMetrics(metrics, {
    source: bus.streams,
    streams: outboxStreams,
    consumed: [Streams.bookletBuilds.name],
    logger,
  });
  outboxLimitGauges(metrics, { maxRows: config.outboxMaxRows, summary: () => outboxBacklogSummary(db), logger });
  const ops = await startOpsServer({
    port: config.port,
    checks: [postgresCheck(db), natsCheck(bus.connection), migrationsCheck(db, SCHEMA, Object.keys(migrations))],
    middleware: [httpMetrics(metrics)],
    routes: { [METRICS_PATH]: metricsHandler(metrics) },
  });
  logger.info({ busPrefix: config.busPrefix, port: ops.port }, 'booklet-svc ready');
  return {
    port: ops.port,
    url: ops.url,
    async stop() {
      await ops.stop();
      await Promise.all(workers.map((w) => w.stop()));
      await relay.stop();
      await retention.stop();
      await bus.close();
      await db.destroy();
    },
  };
}
