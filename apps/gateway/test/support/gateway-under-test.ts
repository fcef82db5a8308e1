import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import { createDatabase, createTestDatabase } from '@payments/db';
import { createLogger } from '@payments/logger';
import { loadGatewayConfig, type GatewayConfig } from '../../src/config';
import { SCHEMA } from '../../src/db/migrations';
import type { GatewayDatabase } from '../../src/db/schema';
import { startGateway, type RunningGateway } from '../../src/server';

/*
 * One gateway the way the HTTP tests run it: its own database and bus prefix, silent, a short bus
 * timeout, and a second pool on its schema for the test to arrange and read rows with.
 */

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
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
}

/** Starts a gateway; `env` goes on top of the defaults (limits, timeouts, NODE_ENV and so on). */
export async function startGatewayUnderTest(
  env: Record<string, string> = {},
  { beforeStart }: StartOptions = {},
): Promise<GatewayUnderTest> {
  const database = await createTestDatabase();
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const config = loadGatewayConfig({
    DATABASE_URL: database.url,
    BUS_PREFIX: prefix,
    PORT: '0',
    LOG_LEVEL: 'silent',
    BUS_TIMEOUT_MS: '2000',
    ...env,
  });
  let gateway: RunningGateway;
  try {
    await beforeStart?.(database.url);
    gateway = await startGateway(config, silent);
  } catch (error) {
    await database.drop();
    throw error;
  }
  const db = createDatabase<GatewayDatabase>({ url: database.url, schema: SCHEMA, poolSize: 2 });
  const standIns: Bus[] = [];
  return {
    gateway,
    config,
    db,
    databaseUrl: database.url,
    prefix,
    async standIn(name) {
      const bus = await connectBus({ url: NATS_URL, prefix, name, logger: silent });
      standIns.push(bus);
      return bus;
    },
    async stop() {
      await gateway.stop();
      for (const bus of standIns) await bus.close();
      await db.destroy();
      await database.drop();
    },
  };
}
