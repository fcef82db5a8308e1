import { connectBus } from '@payments/bus';
import { createDatabase, ensureDatabase, migrateToLatest } from '@payments/db';
import { createLogger, type Logger } from '@payments/logger';
import type { CallbackConfig } from './config';
import { migrations, SCHEMA } from './db/migrations';
import type { CallbacksDatabase } from './db/schema';
import { DeliveryEngine, type AttemptListener } from './domain/delivery-engine';
import { EventStore } from './domain/event-store';
import { createHttpDelivery } from './domain/http-delivery';
import { registerHandlers } from './transport/handlers';
import { consumeCallbackRequests } from './transport/ingest';
import { BusSigningSecrets } from './transport/signing-secrets';

export interface RunningCallbackService {
  stop(): Promise<void>;
}

/** Starts callback-svc: takes callback requests off JetStream and delivers them, signed and retried. */
export async function startCallbackService(config: CallbackConfig, logger: Logger = createLogger('callback-svc', config.logLevel), onAttempt?: AttemptListener): Promise<RunningCallbackService> {
  await ensureDatabase(config.databaseUrl);
  const db = createDatabase<CallbacksDatabase>({ url: config.databaseUrl, schema: SCHEMA, applicationName: 'callback-svc', poolSize: 20 });
  await migrateToLatest(db, SCHEMA, migrations);
  const bus = await connectBus({ url: config.natsUrl, prefix: config.busPrefix, name: 'callback-svc', logger });
  const store = new EventStore(db);
  const http = createHttpDelivery({ timeoutMs: config.timeoutMs, policy: config.mode === 'production' ? 'public-only' : 'allow-private' });
  const engine = new DeliveryEngine(
    store,
    http,
    new BusSigningSecrets(bus),
    { scheduleMs: config.retryScheduleMs, jitter: config.retryJitter },
    { global: config.concurrency, perHost: config.perHostConcurrency, leaseMs: config.leaseMs, pollIntervalMs: config.pollIntervalMs },
    logger,
    onAttempt,
  );
  registerHandlers(bus, store, () => engine.wake());
  engine.start();
  const consumption = await consumeCallbackRequests(bus, engine, logger);
  logger.info({ busPrefix: config.busPrefix, mode: config.mode, schedule: config.retryScheduleMs }, 'callback-svc ready');
  return {
    async stop() {
      await consumption.stop();
      await engine.stop();
      await bus.close();
      await http.close();
      await db.destroy();
    },
  };
}
