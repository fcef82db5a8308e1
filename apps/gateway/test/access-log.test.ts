import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createMigratedTestDatabase } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import { loadGatewayConfig } from '../src/config';
import { removeBus } from '@payments/test-support/bus-provision';
import { provisionFromEnv as provisionBusFor } from '../src/transport/bus/bus-provision';
import { startGateway, type RunningGateway } from '../src/server';

/** The gateway writes one access-log line per API request, naming the route template, not the raw path. */
let gateway: RunningGateway;
let prefix: string;
let dropDatabase: () => Promise<void>;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  // Migrated as npm run migrate does; the gateway logs in as its role.
  const database = await createMigratedTestDatabase(SCHEMA, migrations);
  dropDatabase = database.drop;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const env = {
    DATABASE_URL: database.url,
    BUS_PREFIX: `t${randomBytes(5).toString('hex')}`,
    PORT: '0',
    BUS_TIMEOUT_MS: '2000',
  };
  prefix = env.BUS_PREFIX;
  await provisionBusFor(env);
  gateway = await startGateway(loadGatewayConfig(env), pino({ level: 'info' }, sink));
});

afterAll(async () => {
  await gateway?.stop();
  await removeBus(prefix);
  await dropDatabase?.();
});

it('logs method, route template, status, duration and request id of each request; probes are not logged', async () => {
  const id = randomUUID();
  const res = await fetch(`${gateway.url}/api/v1/accounts-receivable/${id}/consult-transaction`, {
    method: 'POST',
    headers: { 'x-request-id': 'erp-req-42' },
  });
  expect(res.status).toBe(401);
  await fetch(`${gateway.url}/healthz`);
  await new Promise((r) => setTimeout(r, 50));

  const requests = lines.filter((l) => l.msg === 'request');
  expect(requests).toHaveLength(1);
  expect(requests[0]).toMatchObject({
    method: 'POST',
    route: '/api/v1/accounts-receivable/:uuid/consult-transaction',
    status: 401,
    request_id: 'erp-req-42',
  });
  expect(typeof requests[0].duration_ms).toBe('number');
  expect(JSON.stringify(requests[0])).not.toContain(id);
});
