import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { sql } from 'kysely';
import { connect } from 'nats';
import { BusTopologyError, provisionBus } from '@payments/bus';
import { createDatabase, createMigratedTestDatabase } from '@payments/db';
import { migrations, onlineIndexes, SCHEMA } from '../src/db/migrations';
import { createLogger } from '@payments/logger';
import { removeBus } from '@payments/test-support/bus-provision';
import { loadReceivablesConfig } from '../src/config';
import { startReceivablesService } from '../src/service';

/*
 * A start that fails at its last step (the provider webhook port taken) stops what it had started:
 * in-process starts (the e2e tests) would otherwise keep a pool, a bus and workers running, and jest
 * would not exit.
 */

let database: { url: string; adminUrl: string; drop: () => Promise<void> };
let blocker: Server;
let port: number;

beforeAll(async () => {
  database = await createMigratedTestDatabase(SCHEMA, migrations, { onlineIndexes });
  blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, r));
  port = (blocker.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((r) => blocker.close(r));
  await database.drop();
});

/** Connections the service's pool holds open on the test database. */
async function serviceConnections(): Promise<number> {
  const probe = createDatabase<Record<string, never>>({ url: database.adminUrl, schema: 'public', poolSize: 1 });
  try {
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from pg_stat_activity
      where datname = current_database() and application_name = 'receivables-svc'`.execute(probe);
    return Number(rows[0].n);
  } finally {
    await probe.destroy();
  }
}

/** Provisions a bus prefix of its own (as `npm run admin -- bus provision` does), removed after `use`. */
async function withProvisionedBus(use: (prefix: string) => Promise<void>): Promise<void> {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const nc = await connect({ servers: '127.0.0.1:4222' });
  try {
    await provisionBus(nc, { prefix, maxBytes: 64 * 1024 * 1024, replicas: 1 });
    await use(prefix);
  } finally {
    await removeBus(prefix);
    await nc.close();
  }
}

it('a start on a bus never provisioned is refused, naming what is missing, and leaves no connection open', async () => {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const config = loadReceivablesConfig({ DATABASE_URL: database.url, BUS_PREFIX: prefix, LOG_LEVEL: 'silent' });
  const refused = await startReceivablesService(config, createLogger('receivables-svc', 'silent')).catch(
    (err: unknown) => err,
  );
  expect(refused).toBeInstanceOf(BusTopologyError);
  expect((refused as BusTopologyError).differences).toContainEqual({
    kind: 'stream',
    name: `${prefix}_registrations`,
    problem: 'missing',
  });
  expect((refused as Error).message).toMatch(/npm run admin -- bus provision/);
  expect(await serviceConnections()).toBe(0);
});

it('a start whose webhook port is taken fails, and leaves no connection open', async () => {
  await withProvisionedBus(async (prefix) => {
    const config = loadReceivablesConfig({
      DATABASE_URL: database.url,
      BUS_PREFIX: prefix,
      RECEIVABLES_PORT: String(port),
      LOG_LEVEL: 'silent',
    });
    await expect(startReceivablesService(config, createLogger('receivables-svc', 'silent'))).rejects.toThrow(
      /EADDRINUSE/,
    );
    expect(await serviceConnections()).toBe(0);
  });
});
