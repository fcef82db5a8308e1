import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { sql } from 'kysely';
import { createDatabase, createTestDatabase } from '@payments/db';
import { createLogger } from '@payments/logger';
import { loadReceivablesConfig } from '../src/config';
import { startReceivablesService } from '../src/service';

/*
 * A start that fails at its last step (the provider webhook port taken) stops what it had started:
 * in-process starts (the e2e tests) would otherwise keep a pool, a bus and workers running, and jest
 * would not exit.
 */

let database: { url: string; drop: () => Promise<void> };
let blocker: Server;
let port: number;

beforeAll(async () => {
  database = await createTestDatabase();
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
  const probe = createDatabase<Record<string, never>>({ url: database.url, schema: 'public', poolSize: 1 });
  try {
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from pg_stat_activity
      where datname = current_database() and application_name = 'receivables-svc'`.execute(probe);
    return Number(rows[0].n);
  } finally {
    await probe.destroy();
  }
}

it('a start whose webhook port is taken fails, and leaves no connection open', async () => {
  const config = loadReceivablesConfig({
    DATABASE_URL: database.url,
    BUS_PREFIX: `t${randomBytes(5).toString('hex')}`,
    RECEIVABLES_PORT: String(port),
    LOG_LEVEL: 'silent',
  });
  await expect(startReceivablesService(config, createLogger('receivables-svc', 'silent'))).rejects.toThrow(
    /EADDRINUSE/,
  );
  expect(await serviceConnections()).toBe(0);
});
