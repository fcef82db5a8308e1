import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import { Subjects, type ReceivableCreateItem } from '@payments/contracts';
import { createDatabase, createMigratedTestDatabase } from '@payments/db';
import { createLogger } from '@payments/logger';
import { loadGatewayConfig } from '../src/config';
import { removeBus } from '@payments/test-support/bus-provision';
import { provisionFromEnv as provisionBusFor } from '../src/transport/bus/bus-provision';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { GatewayDatabase } from '../src/db/schema';
import { startGateway, type RunningGateway } from '../src/server';
import { createTenant } from '../src/domain/tenancy/tenant-admin';

/*
 * docs/architecture.md over HTTP, through real gateways on one Postgres and one NATS: the tenant's rate limit
 * counts the charges of a receivables batch and is one budget for every gateway instance; a refused
 * batch reaches no service and leaves no Idempotency-Key. And a service whose handler slots and queue
 * are full (BUS_SERVE_CONCURRENCY) answers busy at once: the gateway's 503 with Retry-After.
 * receivables-svc is stood in for by a responder on the same bus that counts what reaches it.
 */

const silent = createLogger('test', 'silent');
const NATS_URL = 'nats://127.0.0.1:4222';

interface System {
  gateways: RunningGateway[];
  db: Kysely<GatewayDatabase>;
  receivables: Bus;
  /** The charges that reached the stand-in receivables service, batch by batch. */
  batches: number[];
  stop(): Promise<void>;
}

async function startSystem(
  instances: number,
  env: Record<string, string>,
  serviceConcurrency: number,
  handler: () => Promise<void> = async () => undefined,
): Promise<System> {
  // Migrated as npm run migrate does; the gateway logs in as its role.
  const database = await createMigratedTestDatabase(SCHEMA, migrations);
  const busPrefix = `t${randomBytes(5).toString('hex')}`;
  const config = loadGatewayConfig({
    DATABASE_URL: database.url,
    BUS_PREFIX: busPrefix,
    PORT: '0',
    LOG_LEVEL: 'silent',
    BUS_TIMEOUT_MS: '3000',
    ...env,
  });
  const gateways: RunningGateway[] = [];
  // The gateway only checks the bus at start: provisioned first, as npm start does.
  await provisionBusFor({ BUS_PREFIX: busPrefix });
  // One after the other: the first one migrates the shared schema.
  for (let i = 0; i < instances; i++) gateways.push(await startGateway(config, silent));
  const batches: number[] = [];
  const receivables = await connectBus({
    url: NATS_URL,
    prefix: busPrefix,
    name: 'receivables-stand-in',
    logger: silent,
    serveConcurrency: serviceConcurrency,
  });
  receivables.serve(
    Subjects.receivables.create,
    async ({ receivables: items }) => {
      batches.push(items.length);
      await handler();
      return { status: 'success' as const, message: 'accepted' };
    },
    { queue: 'receivables-svc' },
  );
  await receivables.connection.flush();
  const db = createDatabase<GatewayDatabase>({ url: database.url, schema: SCHEMA, poolSize: 2 });
  return {
    gateways,
    db,
    receivables,
    batches,
    async stop() {
      for (const gateway of gateways) await gateway.stop();
      await receivables.close();
      await removeBus(busPrefix);
      await db.destroy();
      await database.drop();
    },
  };
}

async function accessToken(gateway: RunningGateway, db: Kysely<GatewayDatabase>) {
  const tenant = await createTenant(db, `Tenant ${randomUUID().slice(0, 8)}`);
  const res = await fetch(`${gateway.url}/api/v1/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.integration_token}` },
  });
  expect(res.status).toBe(200);
  return { tenantId: tenant.tenant_id, jwt: ((await res.json()) as { access_token: string }).access_token };
}

function charge(): ReceivableCreateItem {
  return {
    url_callback: 'https://erp.example.com/cb',
    client_id: randomUUID(),
    payment_slip_id: randomUUID(),
    account_receivable_id: randomUUID(),
    payment_method: 1,
    items: [{ description: 'Mensalidade', quantity: 1, price: 150.75 }],
    due_date: '2026-12-15',
    emission_date: '2026-11-23',
    value: 150.75,
    discount_type: 'NaoTemDesconto',
    fine_value: 2,
    interest_amount: 0.05,
  };
}

function postBatch(gateway: RunningGateway, jwt: string, size: number, key = randomUUID()) {
  return fetch(`${gateway.url}/api/v1/accounts-receivable`, {
    method: 'POST',
    headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(Array.from({ length: size }, charge)),
  });
}

describe('the charge limit, shared by two gateway instances (burst 10, refilled 1 a second)', () => {
  let system: System;
  beforeAll(async () => {
    system = await startSystem(2, { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '10' }, 8);
  });
  afterAll(() => system?.stop());

  it('counts a batch of 6 as 6: 6 on one instance, then 6 on the other is 429, stored nowhere', async () => {
    const [one, two] = system.gateways;
    const { tenantId, jwt } = await accessToken(one, system.db);
    expect((await postBatch(one, jwt, 6)).status).toBe(202);

    const key = randomUUID();
    const refused = await postBatch(two, jwt, 6, key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ code: 'rate_limited', status: 429 });
    const keys = await system.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('tenant_id', '=', tenantId)
      .where('key', '=', key)
      .execute();
    expect(keys).toEqual([]);

    // The refused batch paid its arrival token (every request does, before its body is read); the
    // 3 left are there on either instance, and another tenant has its own 10.
    expect((await postBatch(two, jwt, 3)).status).toBe(202);
    expect((await postBatch(one, jwt, 1)).status).toBe(429);
    const other = await accessToken(two, system.db);
    expect((await postBatch(two, other.jwt, 10)).status).toBe(202);
    // A second later one charge has come back, not five: for both instances.
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await postBatch(one, jwt, 1)).status).toBe(202);
    expect((await postBatch(two, jwt, 5)).status).toBe(429);
    expect(system.batches).toEqual([6, 3, 10, 1]);
  });

  it('refuses a batch larger than the burst for good, saying so, without Retry-After', async () => {
    const { jwt } = await accessToken(system.gateways[0], system.db);
    const res = await postBatch(system.gateways[1], jwt, 11);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBeNull();
    expect(await res.json()).toMatchObject({
      code: 'rate_limited',
      detail: 'this request carries 11 charges, more than the 10 a tenant may send at once; split it',
    });
  });
});

describe('invalid requests under the charge limit', () => {
  let system: System;
  beforeAll(async () => {
    system = await startSystem(1, { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '3' }, 8);
  });
  afterAll(() => system?.stop());

  it('cost 1 each: a flood of bad requests is limited like any other', async () => {
    const [gateway] = system.gateways;
    const { jwt } = await accessToken(gateway, system.db);
    const bad = () =>
      fetch(`${gateway.url}/api/v1/accounts-receivable`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${jwt}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
        body: JSON.stringify([{ ...charge(), value: -1 }]),
      });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await bad()).status);
    expect(statuses).toEqual([422, 422, 422, 429, 429]);
    expect((await postBatch(gateway, jwt, 1)).status).toBe(429);
    expect(system.batches).toEqual([]);
  });
});

describe('a service with every handler slot and queue place taken', () => {
  let system: System;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  beforeAll(async () => {
    // One handler at a time, 4 more waiting (ServeSlots' queue is 4 x the concurrency).
    system = await startSystem(1, { RATE_LIMIT_PER_SECOND: '0' }, 1, () => gate);
  });
  afterAll(() => system?.stop());

  it('is answered 503 with Retry-After at once; the ones held run once the slot frees', async () => {
    const [gateway] = system.gateways;
    const { jwt } = await accessToken(gateway, system.db);
    const sent = Array.from({ length: 6 }, () => postBatch(gateway, jwt, 1));
    // While the one running is held, the sixth to arrive finds no place: its answer comes first.
    const first = await Promise.race(sent);
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('5');
    expect(await first.json()).toMatchObject({ code: 'service_unavailable' });
    open();
    const statuses = (await Promise.all(sent)).map((res) => res.status).sort();
    expect(statuses).toEqual([202, 202, 202, 202, 202, 503]);
    expect(system.batches).toHaveLength(5);
  });
});
