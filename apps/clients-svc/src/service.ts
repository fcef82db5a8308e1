import { connectBus } from '@payments/bus';
import { createDatabase, ensureDatabase, migrateToLatest } from '@payments/db';
import { createLogger, type Logger } from '@payments/logger';
import type { ClientsConfig } from './config';
import type { ClientsDatabase } from './db/schema';
import { migrations, SCHEMA } from './db/migrations';
import { registerHandlers } from './transport/handlers';

export interface RunningClientsService {
  stop(): Promise<void>;
}

/** Starts clients-svc: migrates its schema, then answers client commands on the bus. */
export async function startClientsService(config: ClientsConfig, logger: Logger = createLogger('clients-svc', config.logLevel)): Promise<RunningClientsService> {
  await ensureDatabase(config.databaseUrl);
  const db = createDatabase<ClientsDatabase>({ url: config.databaseUrl, schema: SCHEMA, applicationName: 'clients-svc' });
  await migrateToLatest(db, SCHEMA, migrations);
  const bus = await connectBus({ url: config.natsUrl, prefix: config.busPrefix, name: 'clients-svc', logger });
  registerHandlers(bus, db);
  logger.info({ busPrefix: config.busPrefix }, 'clients-svc ready');
  return {
    async stop() {
      await bus.close();
      await db.destroy();
    },
  };
}
