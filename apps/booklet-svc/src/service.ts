import { connectBus } from '@payments/bus';
import { BOOKLET_DOWNLOAD_PATH, Streams } from '@payments/contracts';
import { createDatabase, ensureDatabase, migrateToLatest } from '@payments/db';
import { createLogger, type Logger } from '@payments/logger';
import { OutboxRelay } from '@payments/outbox';
import { signLink } from '@payments/signed-links';
import type { BookletConfig } from './config';
import { migrations, SCHEMA } from './db/migrations';
import type { BookletsDatabase } from './db/schema';
import { BusInstallmentSource, PostgresPdfStore } from './transport/bus-sources';
import { registerHandlers, startBuildWorker } from './transport/handlers';

export interface RunningBookletService {
  stop(): Promise<void>;
}

/** Starts booklet-svc: booklet requests, the build worker, the outbox relay. */
export async function startBookletService(config: BookletConfig, logger: Logger = createLogger('booklet-svc', config.logLevel)): Promise<RunningBookletService> {
  await ensureDatabase(config.databaseUrl);
  const db = createDatabase<BookletsDatabase>({ url: config.databaseUrl, schema: SCHEMA, applicationName: 'booklet-svc' });
  await migrateToLatest(db, SCHEMA, migrations);
  const bus = await connectBus({ url: config.natsUrl, prefix: config.busPrefix, name: 'booklet-svc', logger, requestTimeoutMs: config.busTimeoutMs });
  for (const spec of [Streams.bookletBuilds, Streams.callbackRequests]) await bus.streams.ensure(spec);
  const relay = new OutboxRelay(db, bus, [Streams.bookletBuilds, Streams.callbackRequests], logger);
  const onEnqueued = () => relay.wake();
  const source = new BusInstallmentSource(bus);
  const store = new PostgresPdfStore(db);
  const links = (bookletId: string) => {
    const { expires, signature } = signLink(config.downloadLinkSecret, bookletId, new Date(Date.now() + config.downloadLinkTtlSeconds * 1000));
    return `${config.publicBaseUrl}${BOOKLET_DOWNLOAD_PATH}/${bookletId}?expires=${expires}&signature=${signature}`;
  };
  registerHandlers(bus, { db, source, store, onEnqueued });
  relay.start();
  const worker = await startBuildWorker(bus, { db, source, store, links, logger, maxWaitMs: config.maxWaitForRegistrationMs }, onEnqueued);
  logger.info({ busPrefix: config.busPrefix }, 'booklet-svc ready');
  return {
    async stop() {
      await worker.stop();
      await relay.stop();
      await bus.close();
      await db.destroy();
    },
  };
}
