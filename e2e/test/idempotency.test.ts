import { randomUUID } from 'node:crypto';
import { loadClientsConfig, startClientsService } from '@payments/clients-svc';
import { createLogger } from '@payments/logger';
import pg from 'pg';
import type { Problem } from '@payments/contracts';
import type { ApiResponse } from '../support/api-client';
import { waitFor } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { clientPayload } from '../support/fixtures';
import { countClients } from '../support/db-probe';
import { appDatabaseUrl } from '@payments/scripts/migrate';

let system: TestSystem;
beforeAll(async () => {
  // A long bus timeout: the race test holds a request on a table lock for as long as it needs.
  system = await startSystem({ env: { BUS_TIMEOUT_MS: '30000' } });
});
afterAll(async () => {
  await system?.stop();
});

it('requires Idempotency-Key on client create and update (400, nothing stored)', async () => {
  const tenant = await system.newTenant();
  const create = await tenant.api.post('/api/v1/clients', [clientPayload()]);
  expect(create.status).toBe(400);
  expect(create.headers.get('content-type')).toContain('application/problem+json');
  expect(create.json).toMatchObject({
    code: 'idempotency_key_missing',
    errors: [{ in: 'header', path: 'Idempotency-Key' }],
  });
  const update = await tenant.api.put(`/api/v1/clients/${randomUUID()}`, clientPayload());
  expect(update.status).toBe(400);
  expect(await countClients(system.databaseUrl, tenant.tenantId)).toBe(0);
});

it('refuses an Idempotency-Key that is too long or has spaces', async () => {
  const tenant = await system.newTenant();
  for (const key of ['x'.repeat(256), 'has space']) {
    const res = await tenant.api.post('/api/v1/clients', [clientPayload()], { 'idempotency-key': key });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 'idempotency_key_invalid' });
  }
});

it('replays the stored answer for the same key and request, without doing it twice', async () => {
  const tenant = await system.newTenant();
  const client = clientPayload({ return_client_data: true });
  const key = randomUUID();
  const first = await tenant.api.postIdempotent('/api/v1/clients', [client], key);
  expect(first.status).toBe(201);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  // Same JSON, keys in another order and other whitespace: still the same request.
  const reordered = JSON.stringify([Object.fromEntries(Object.entries(client).reverse())], null, 2);
  const second = await tenant.api.post('/api/v1/clients', reordered, { 'idempotency-key': key });
  expect(second.status).toBe(201);
  expect(second.headers.get('idempotent-replayed')).toBe('true');
  expect(second.text).toBe(first.text);
  expect(second.json).toMatchObject({
    total_created_clients: [{ client_id: client.client_id }],
    clients_already_registered: [],
  });
  expect(await countClients(system.databaseUrl, tenant.tenantId)).toBe(1);
});

it('answers 422 when a key is reused with a different body or path', async () => {
  const tenant = await system.newTenant();
  const key = randomUUID();
  expect((await tenant.api.postIdempotent('/api/v1/clients', [clientPayload()], key)).status).toBe(201);
  const otherBody = await tenant.api.postIdempotent('/api/v1/clients', [clientPayload()], key);
  expect(otherBody.status).toBe(422);
  expect(otherBody.json).toMatchObject({ code: 'idempotency_key_reused' });
  const otherPath = await tenant.api.put(`/api/v1/clients/${randomUUID()}`, clientPayload(), {
    'idempotency-key': key,
  });
  expect(otherPath.status).toBe(422);
  expect(await countClients(system.databaseUrl, tenant.tenantId)).toBe(1);
});

it('scopes keys by tenant: the same key in two tenants are two requests', async () => {
  const a = await system.newTenant('A');
  const b = await system.newTenant('B');
  const key = randomUUID();
  const ra = await a.api.postIdempotent('/api/v1/clients', [clientPayload()], key);
  const rb = await b.api.postIdempotent('/api/v1/clients', [clientPayload()], key);
  expect([ra.status, rb.status]).toEqual([201, 201]);
  expect(rb.headers.get('idempotent-replayed')).toBeNull();
  expect(await countClients(system.databaseUrl, a.tenantId)).toBe(1);
  expect(await countClients(system.databaseUrl, b.tenantId)).toBe(1);
});

it('answers 409 to the same key while its first request still runs: racing requests make one client, one answer and its replays', async () => {
  const tenant = await system.newTenant();
  const client = clientPayload({ return_client_data: true });
  const key = randomUUID();
  const send = () => tenant.api.postIdempotent<Problem>('/api/v1/clients', [client], key);
  // Hold clients-svc's insert with a table lock, so that whichever racer claims the key first is
  // still running when the others arrive (without it, the first may finish before the rest start).
  const lock = new pg.Client({ connectionString: system.databaseUrl });
  await lock.connect();
  let racers: Array<Promise<ApiResponse<Problem>>>;
  try {
    await lock.query('begin');
    await lock.query('lock table clients.clients in exclusive mode');
    const answered: Array<ApiResponse<Problem>> = [];
    racers = Array.from({ length: 6 }, () => send().then((r) => (answered.push(r), r)));
    await waitFor(() => answered.length === 5, 20_000, 'five racers answered while the first one waits');
    for (const r of answered) {
      expect(r.status).toBe(409);
      expect(r.json).toMatchObject({ code: 'idempotency_request_in_progress', status: 409 });
    }
    const late = await send(); // still running: still 409
    expect(late.status).toBe(409);
    await lock.query('commit');
  } finally {
    await lock.end(); // a failure before the commit ends the transaction (and the lock) with the connection
  }
  const all = await Promise.all(racers);
  expect(all.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  const created = all.find((r) => r.status === 201)!;
  expect(created.headers.get('idempotent-replayed')).toBeNull();
  expect(created.json).toMatchObject({ total_created_clients: [{ client_id: client.client_id }] });
  // Finished: the same key now replays that one answer.
  const after = await send();
  expect(after.status).toBe(201);
  expect(after.headers.get('idempotent-replayed')).toBe('true');
  expect(after.text).toBe(created.text);
  expect(await countClients(system.databaseUrl, tenant.tenantId)).toBe(1);
});

it('does not store a validation failure: the same key works once the body is fixed', async () => {
  const tenant = await system.newTenant();
  const key = randomUUID();
  const bad = await tenant.api.postIdempotent('/api/v1/clients', [clientPayload({ cnpj_cpf: '123.456.789-00' })], key);
  expect(bad.status).toBe(422);
  const good = await tenant.api.postIdempotent('/api/v1/clients', [clientPayload()], key);
  expect(good.status).toBe(201);
});

it('stores a 404 (the request ran) and replays it', async () => {
  const tenant = await system.newTenant();
  const key = randomUUID();
  const path = `/api/v1/clients/${randomUUID()}`;
  const body = clientPayload();
  const first = await tenant.api.put(path, body, { 'idempotency-key': key });
  expect(first.status).toBe(404);
  const again = await tenant.api.put(path, body, { 'idempotency-key': key });
  expect(again.status).toBe(404);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
});

describe('when the clients service is down', () => {
  let degraded: TestSystem;
  beforeAll(async () => {
    degraded = await startSystem({ withoutClients: true });
  });
  afterAll(async () => {
    await degraded?.stop();
  });

  it('answers 503 problem+json with Retry-After, keeps nothing, and the same key succeeds once the service is back', async () => {
    const tenant = await degraded.newTenant();
    const key = randomUUID();
    const body = [clientPayload()];
    const down = await tenant.api.postIdempotent('/api/v1/clients', body, key);
    expect(down.status).toBe(503);
    expect(down.headers.get('content-type')).toContain('application/problem+json');
    expect(down.json).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(Number(down.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const env = {
      DATABASE_URL: appDatabaseUrl('clients-svc', degraded.databaseUrl),
      BUS_PREFIX: degraded.busPrefix,
      CLIENTS_PORT: '0',
    };
    const clients = await startClientsService(loadClientsConfig(env), createLogger('clients-svc', 'silent'));
    try {
      const up = await tenant.api.postIdempotent('/api/v1/clients', body, key);
      expect(up.status).toBe(201);
      expect(up.headers.get('idempotent-replayed')).toBeNull();
    } finally {
      await clients.stop();
    }
  });
});
