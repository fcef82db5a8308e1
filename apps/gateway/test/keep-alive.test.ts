import { randomBytes } from 'node:crypto';
import { Agent, get, type IncomingMessage } from 'node:http';
import pino from 'pino';
import { createMigratedTestDatabase } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import { removeBus } from '@payments/test-support/bus-provision';
import { loadGatewayConfig } from '../src/config';
import { provisionFromEnv as provisionBusFor } from '../src/transport/bus/bus-provision';
import { startGateway, type RunningGateway } from '../src/server';

/**
 * A load balancer keeps an idle connection 60 s and then sends the next request on it: the gateway
 * must still be there to answer (docs/kubernetes.md), and stopping must not wait for idle connections.
 */
let gateway: RunningGateway;
let prefix: string;
let dropDatabase: () => Promise<void>;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  // Migrated as npm run migrate does; the gateway logs in as its role.
  const database = await createMigratedTestDatabase(SCHEMA, migrations);
  dropDatabase = database.drop;
  const env = { DATABASE_URL: database.url, BUS_PREFIX: `t${randomBytes(5).toString('hex')}`, PORT: '0' };
  prefix = env.BUS_PREFIX;
  await provisionBusFor(env);
  gateway = await startGateway(loadGatewayConfig(env), pino({ level: 'silent' }));
});

afterAll(async () => {
  agent.destroy();
  await gateway?.stop();
  await removeBus(prefix);
  await dropDatabase?.();
});

interface Answer {
  status: number | undefined;
  reusedSocket: boolean;
}

function healthz(): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = get(`${gateway.url}/healthz`, { agent }, (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, reusedSocket: req.reusedSocket }));
    });
    req.on('error', reject);
  });
}

it('answers on a keep-alive connection left idle 61 s', async () => {
  expect(await healthz()).toEqual({ status: 200, reusedSocket: false });
  await new Promise((r) => setTimeout(r, 61_000));
  expect(await healthz()).toEqual({ status: 200, reusedSocket: true });
}, 75_000);

it('stops promptly with an idle keep-alive connection open', async () => {
  await healthz();
  const started = Date.now();
  await gateway.stop();
  expect(Date.now() - started).toBeLessThan(5_000);
});
