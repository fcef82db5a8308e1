import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { Kysely } from 'kysely';
import type { GatewayDatabase } from '../src/db/schema';
import type { RunningGateway } from '../src/server';
import { createTenant } from '../src/domain/tenancy/tenant-admin';
import { startGatewayUnderTest, type GatewayUnderTest } from './support/gateway-under-test';

/*
 * docs/architecture.md, Bad input: bodies that would crash a parser or hold a connection are refused by the
 * gateway itself, as problem+json 4xx, before the Idempotency-Key is taken. No service runs here:
 * each refusal happens before anything is asked of the bus.
 */

const REQUEST_TIMEOUT_MS = 1_000;
let running: GatewayUnderTest;
let gateway: RunningGateway;
let db: Kysely<GatewayDatabase>;
let jwt: string;

beforeAll(async () => {
  running = await startGatewayUnderTest({ REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) });
  ({ gateway, db } = running);
  const tenant = await createTenant(db, 'Bad input');
  const auth = await fetch(`${gateway.url}/api/v1/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.integration_token}` },
  });
  jwt = ((await auth.json()) as { access_token: string }).access_token;
});

afterAll(async () => {
  await running?.stop();
});

function post(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${jwt}`,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
      ...headers,
    },
    body,
  });
}

async function problem(res: Response) {
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  return (await res.json()) as { status: number; code: string; errors?: Array<{ path: string; message: string }> };
}

async function storedKeys(): Promise<number> {
  const rows = await db
    .selectFrom('idempotency_keys')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .execute();
  return Number(rows[0].n);
}

describe('refused before anything reads the body', () => {
  it('answers 1 MiB of nested arrays 400 naming where level 33 opens, and keeps nothing', async () => {
    const before = await storedKeys();
    const res = await post('/api/v1/clients', '['.repeat(1024 * 1024 - 1));
    expect(res.status).toBe(400);
    expect(await problem(res)).toMatchObject({
      code: 'malformed_json',
      errors: [{ path: '/0'.repeat(32), message: 'opens level 33; at most 32 are allowed' }],
    });
    const objects = await post('/api/v1/accounts-receivable/search', `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`);
    expect(objects.status).toBe(400);
    expect((await problem(objects)).errors?.[0].path).toBe('/a'.repeat(32));
    expect(await storedKeys()).toBe(before);
  });

  it('answers U+0000 in a name and a year-0000 due date 422 naming the field', async () => {
    const client = { client_id: randomUUID(), name: 'Maria\u0000', cnpj_cpf: '529.982.247-25' };
    const clients = await post('/api/v1/clients', JSON.stringify([client]));
    expect(clients.status).toBe(422);
    expect((await problem(clients)).errors).toEqual([{ path: '/0/name', message: 'must not contain U+0000 (NUL)' }]);
    const search = await post(
      '/api/v1/accounts-receivable/search',
      JSON.stringify({ state: 'all', start_date: '0000-01-01', end_date: '2026-01-01' }),
    );
    expect(search.status).toBe(422);
    expect((await problem(search)).errors).toEqual([
      { path: '/start_date', message: 'must be a date YYYY-MM-DD from 2000-01-01 to 2099-12-31' },
    ]);
  });

  it('reads gzip bodies as before, refuses an unknown content-encoding with 415 and bad gzip with 400', async () => {
    const deep = gzipSync(Buffer.from('['.repeat(100)));
    const res = await post('/api/v1/clients', deep, { 'content-encoding': 'gzip' });
    expect(res.status).toBe(400);
    expect((await problem(res)).code).toBe('malformed_json');
    const valid = gzipSync(Buffer.from(JSON.stringify([{ client_id: 'nope' }])));
    const gz = await post('/api/v1/clients', valid, { 'content-encoding': 'gzip' });
    expect(gz.status).toBe(422);
    expect((await problem(gz)).errors?.map((e) => e.path)).toContain('/0/client_id');
    expect((await post('/api/v1/clients', '[]', { 'content-encoding': 'br' })).status).toBe(415);
    expect((await post('/api/v1/clients', 'not gzip', { 'content-encoding': 'gzip' })).status).toBe(400);
    expect((await post('/api/v1/clients', '[]', { 'content-type': 'application/json; charset=latin1' })).status).toBe(
      415,
    );
  });
});

describe('request timeout (REQUEST_TIMEOUT_MS)', () => {
  it('answers a client trickling its body 408 problem+json and closes the connection', async () => {
    const started = Date.now();
    const answer = await new Promise<{ status: number; body: string; connection?: string }>((resolve, reject) => {
      const req = httpRequest(`${gateway.url}/api/v1/clients`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${jwt}`,
          'content-type': 'application/json',
          'content-length': '1000',
          'idempotency-key': randomUUID(),
        },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body, connection: res.headers.connection }));
      });
      req.flushHeaders();
      // A byte every 200 ms: the body would take 200 s.
      const trickle = setInterval(() => {
        if (req.destroyed || req.writableEnded) return clearInterval(trickle);
        req.write(' ');
      }, 200);
      req.on('close', () => clearInterval(trickle));
    });
    const elapsed = Date.now() - started;
    expect(answer.status).toBe(408);
    expect(answer.connection).toBe('close');
    expect(JSON.parse(answer.body)).toMatchObject({ status: 408, code: 'request_timeout' });
    expect(elapsed).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(REQUEST_TIMEOUT_MS + 1_500);
  });

  it('cuts off a client trickling its headers (Node answers 408 and closes)', async () => {
    const port = new URL(gateway.url).port;
    const started = Date.now();
    const reply = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write('POST /api/v1/clients HTTP/1.1\r\nHost: x\r\n');
        const trickle = setInterval(() => socket.write('X-Slow: y\r\n'), 200);
        let data = '';
        socket.on('data', (c: Buffer) => (data += c.toString()));
        socket.on('close', () => {
          clearInterval(trickle);
          resolve(data);
        });
        socket.on('error', () => undefined);
      });
    });
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    // The headers timeout is REQUEST_TIMEOUT_MS, checked every second.
    expect(Date.now() - started).toBeLessThan(REQUEST_TIMEOUT_MS + 2_500);
  });

  it('still takes a body that arrives in time', async () => {
    const res = await post('/api/v1/clients', JSON.stringify([{ client_id: 'x' }]));
    expect(res.status).toBe(422);
  });
});
