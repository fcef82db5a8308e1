import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import { keyring } from '@payments/credential-seal';
import { createDatabase, createTestDatabase, migrateService, serviceDatabaseUrl } from '@payments/db';
import { createLogger } from '@payments/logger';
import { removeBus } from '@payments/test-support/bus-provision';
import { provisionFromEnv as provisionBusFor } from '../../src/transport/bus/bus-provision';
import { loadGatewayConfig, type GatewayConfig } from '../../src/config';
import { gatewayMigrations, SCHEMA } from '../../src/db/migrations';
import type { GatewayDatabase } from '../../src/db/schema';
import { startGateway, type RunningGateway } from '../../src/server';

/*
 * One gateway the way the HTTP tests run it: its own database and bus prefix, silent, a short bus
 * timeout, and a second pool on its schema for the test to arrange and read rows with.
 */

const LOCAL_NATS = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const silent = createLogger('test', 'silent');

export interface GatewayUnderTest {
  gateway: RunningGateway;
  config: GatewayConfig;
  db: Kysely<GatewayDatabase>;
  databaseUrl: string;
  prefix: string;
  /** A bus connection on the gateway's prefix that plays a service; `stop` closes it. */
  standIn(name: string): Promise<Bus>;
  /** Stops the gateway, closes the stand-ins and the pool, drops the database. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Runs on the fresh database before the gateway migrates it (to seed an older schema, say). */
  beforeStart?: (databaseUrl: string) => Promise<void>;
  /**
   * The NATS the gateway, its stand-ins and the provisioning use; default NATS_URL, else the local one
   * (a production gateway needs one that checks logins: its stand-ins and the provisioning log in as
   * that server's user without credentials).
   */
  natsUrl?: string;
}

/** Starts a gateway; `env` goes on top of the defaults (limits, timeouts, NODE_ENV and so on). */
export async function startGatewayUnderTest(
  env: Record<string, string> = {},
  { beforeStart, natsUrl = LOCAL_NATS }: StartOptions = {},
): Promise<GatewayUnderTest> {
  const database = await createTestDatabase();
  // The gateway logs in as its role, on a schema migrated beforehand (npm run migrate).
  const serviceUrl = serviceDatabaseUrl(database.url, SCHEMA);
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const config = loadGatewayConfig({
    DATABASE_URL: serviceUrl,
    BUS_PREFIX: prefix,
    PORT: '0',
    LOG_LEVEL: 'silent',
    BUS_TIMEOUT_MS: '2000',
    NATS_URL: natsUrl,
    ...env,
  });
  let gateway: RunningGateway;
  try {
    await beforeStart?.(database.url);
    await migrateService({
      url: database.url,
      schema: SCHEMA,
      migrations: gatewayMigrations(keyring(config.credentialsEncryptionKey, config.credentialsPreviousKeys)),
    });
    // The gateway only checks the bus at start: provisioned first, as npm start does.
    await provisionBusFor({
      NATS_URL: natsUrl,
      BUS_PREFIX: prefix,
      // Its own limits (a production gateway's default is larger): it refuses a weaker bus.
      STREAM_MAX_BYTES: String(config.streamMaxBytes),
      STREAM_REPLICAS: String(config.streamReplicas),
    });
    gateway = await startGateway(config, silent);
  } catch (error) {
    await removeBus(prefix, natsUrl);
    await database.drop();
    throw error;
  }
  const db = createDatabase<GatewayDatabase>({ url: serviceUrl, schema: SCHEMA, poolSize: 2 });
  const standIns: Bus[] = [];
  return {
    gateway,
    config,
    db,
    databaseUrl: database.url,
    prefix,
    async standIn(name) {
      const bus = await connectBus({ url: natsUrl, prefix, name, logger: silent });
      standIns.push(bus);
      return bus;
    },
    async stop() {
      await gateway.stop();
      for (const bus of standIns) await bus.close();
      await removeBus(prefix, natsUrl);
      await db.destroy();
      await database.drop();
    },
  };
}
