import { connectBus, serviceBusOptions } from '@payments/bus';
import { BOOKLET_DOWNLOAD_PATH, QueueGroups, Streams } from '@payments/contracts';
import { isDatabaseUnavailable, openServiceDatabaseIn } from '@payments/db';
import { openOpsServer } from '@payments/health';
import { startService } from '@payments/lifecycle';
import { createLogger, type Logger } from '@payments/logger';
import {
  createMetricsRegistry,
  metricsEndpoint,
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
export function startBookletService(
  config: BookletConfig,
  logger: Logger = createLogger('booklet-svc', config.logLevel),
): Promise<RunningBookletService> {
  return startService(async (scope) => {
    // Migrated beforehand (`npm run migrate`): only checked here, the start refused in one line otherwise.
    const db = await openServiceDatabaseIn<BookletsDatabase>(scope, {
      url: config.databaseUrl,
      schema: SCHEMA,
      applicationName: 'booklet-svc',
      poolSize: config.databasePoolSize,
      migrations,
      logger,
    });
    const bus = await scope.open(
      'bus',
      () =>
        connectBus({
          ...serviceBusOptions(config, 'booklet-svc', logger),
          // Postgres away is an outage, not a failure of the job: retried without counting (JOB_MAX_FAILURES).
          isOutage: isDatabaseUnavailable,
        }),
      (opened) => opened.close(),
    );
    const outboxStreams = [Streams.bookletBuilds, Streams.callbackRequests];
    // What it writes (through its outbox) or reads, provisioned by `npm run admin -- bus provision`:
    // only checked here (it may not create them), and the start refused, naming what is missing or weaker.
    await bus.streams.check(QueueGroups.booklets);
    const relay = new OutboxRelay({ db, bus, streams: outboxStreams, logger, maxRows: config.outboxMaxRows });
    const onEnqueued = () => relay.wake();
    const source = new BusInstallmentSource(bus);
    const store = new PostgresPdfStore(db);
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
    await scope.open(
      'file retention',
      () => startBookletFileRetention({ db, schema: SCHEMA, retentionDays: config.fileRetentionDays, logger }),
      (retention) => retention.stop(),
    );
    await scope.open(
      'outbox relay',
      () => relay.start(),
      () => relay.stop(),
    );
    await scope.open(
      'workers',
      () => startWorkers(bus, { db, source, store, links, logger, maxWaitMs: config.maxWaitMs, onEnqueued }),
      (started) => Promise.all(started.map((w) => w.stop())),
    );
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
    const ops = await openOpsServer(scope, {
      port: config.port,
      db,
      nats: bus.connection,
      schema: SCHEMA,
      migrations,
      ...metricsEndpoint(metrics),
    });
    logger.info({ busPrefix: config.busPrefix, port: ops.port }, 'booklet-svc ready');
    return { port: ops.port, url: ops.url };
  });
}
