import { randomUUID } from 'node:crypto';
import { BOOKLET_DOWNLOAD_PATH, SLIP_PDF_PATH, Subjects } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { startGateway, type RunningGateway } from '../src/server';
import { createTenant } from '../src/domain/tenancy/tenant-admin';
import { startGatewayUnderTest as start, type GatewayUnderTest as Running } from './support/gateway-under-test';

/*
 * What requests cost against the rate limits (docs/api.md, Limits): every API request pays a token
 * as it arrives, before its body is read, so requests refused for their body or headers are limited
 * too; a search pays by the rows it may answer; and the authentication and download limits are kept
 * in Postgres, one count for every gateway instance.
 */

const silent = createLogger('test', 'silent');

/**
 * A gateway whose tenants' bucket holds `burst` and refills at 1 every 100 s: nothing comes back while
 * a test runs, however slow the machine (RATE_LIMIT_PER_SECOND takes whole numbers only). It shares
 * the database of `running`'s gateway, which the test leaves idle.
 */
async function slowRefill(running: Running, burst: number): Promise<RunningGateway> {
  const { config } = running;
  return startGateway({ ...config, rateLimit: { ...config.rateLimit, perSecond: 0.01, burst } }, silent);
}

async function accessToken(running: Running, gateway: RunningGateway): Promise<{ tenantId: string; jwt: string }> {
  const tenant = await createTenant(running.db, `Tenant ${randomUUID().slice(0, 8)}`);
  const res = await fetch(`${gateway.url}/api/v1/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.integration_token}` },
  });
  expect(res.status).toBe(200);
  return { tenantId: tenant.tenant_id, jwt: ((await res.json()) as { access_token: string }).access_token };
}

/** The status, code and Retry-After of an answer, read as the ERP sees them. */
async function outcome(res: Response): Promise<{ status: number; code: string | undefined; retryAfter: boolean }> {
  const type = res.headers.get('content-type') ?? '';
  const body = type.includes('json') ? ((await res.json()) as { code?: string }) : undefined;
  return { status: res.status, code: body?.code, retryAfter: Number(res.headers.get('retry-after')) >= 1 };
}

/** What the bucket `key` holds now (tokens left at its last take; it refills slowly here). */
async function tokensOf(running: Running, key: string): Promise<number | undefined> {
  const row = await running.db
    .selectFrom('rate_limit_buckets')
    .select('tokens')
    .where('key', '=', key)
    .executeTakeFirst();
  return row?.tokens;
}

describe('requests refused before their body is parsed, under a limit of 5 at once', () => {
  const BODY_LIMIT = 2_048;
  let running: Running;
  let gateway: RunningGateway;
  beforeAll(async () => {
    running = await start({ BODY_LIMIT_BYTES: String(BODY_LIMIT) });
    gateway = await slowRefill(running, 5);
  });
  afterAll(async () => {
    await gateway?.stop();
    await running?.stop();
  });

  it('cost 1 each: malformed JSON, 415, 413, deep nesting and a missing key beyond the limit are 429', async () => {
    const { jwt } = await accessToken(running, gateway);
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${gateway.url}/api/v1/clients`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${jwt}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
          ...headers,
        },
        body,
      });
    const kinds: Array<[string, () => Promise<Response>]> = [
      ['malformed JSON', () => post('[{"name": ')],
      ['not JSON', () => post('[]', { 'content-type': 'text/plain' })],
      ['too large', () => post(`["${'x'.repeat(BODY_LIMIT)}"]`)],
      ['nested too deep', () => post('['.repeat(40) + ']'.repeat(40))],
      [
        'no Idempotency-Key',
        () =>
          fetch(`${gateway.url}/api/v1/clients`, {
            method: 'POST',
            headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
            body: '[]',
          }),
      ],
    ];
    const first = [];
    for (const [label, send] of kinds) first.push({ label, ...(await outcome(await send())) });
    expect(first).toEqual([
      { label: 'malformed JSON', status: 400, code: 'malformed_json', retryAfter: false },
      { label: 'not JSON', status: 415, code: 'unsupported_media_type', retryAfter: false },
      { label: 'too large', status: 413, code: 'payload_too_large', retryAfter: false },
      { label: 'nested too deep', status: 400, code: 'malformed_json', retryAfter: false },
      { label: 'no Idempotency-Key', status: 400, code: 'idempotency_key_missing', retryAfter: false },
    ]);
    // The five spent the burst: the same requests again are refused as over the limit, not read.
    const again = [];
    for (const [label, send] of kinds) again.push({ label, ...(await outcome(await send())) });
    expect(again).toEqual(kinds.map(([label]) => ({ label, status: 429, code: 'rate_limited', retryAfter: true })));
  });
});

describe('a search, under a limit of 50 at once', () => {
  let running: Running;
  let gateway: RunningGateway;
  beforeAll(async () => {
    running = await start();
    gateway = await slowRefill(running, 50);
    const receivables = await running.standIn('receivables-stand-in');
    receivables.serve(Subjects.receivables.search, async () => ({ items: [], next_cursor: null }), {
      queue: 'receivables-svc',
    });
    await receivables.connection.flush();
    const callbacks = await running.standIn('callbacks-stand-in');
    callbacks.serve(Subjects.callbacks.list, async () => ({ items: [], next_cursor: null }), {
      queue: 'callback-svc',
    });
    await callbacks.connection.flush();
  });
  afterAll(async () => {
    await gateway?.stop();
    await running?.stop();
  });

  const search = (jwt: string, limit: number, on = gateway) =>
    fetch(`${on.url}/api/v1/accounts-receivable/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
      body: JSON.stringify({ state: 'all', start_date: '2026-01-01', end_date: '2026-12-31', limit }),
    });

  it('costs 1 token per 100 rows it may answer: a page of 5,000 takes 50, one of 100 takes 1', async () => {
    const small = await accessToken(running, gateway);
    expect((await search(small.jwt, 100)).status).toBe(200);
    expect((await search(small.jwt, 100)).status).toBe(200);
    // 2 taken of 50.
    expect(await tokensOf(running, `tenant:${small.tenantId}`)).toBeGreaterThanOrEqual(48);
    expect(await tokensOf(running, `tenant:${small.tenantId}`)).toBeLessThan(49);

    const large = await accessToken(running, gateway);
    expect((await search(large.jwt, 5_000)).status).toBe(200);
    expect(await tokensOf(running, `tenant:${large.tenantId}`)).toBeLessThan(1);
    expect((await outcome(await search(large.jwt, 100))).status).toBe(429);
  });

  it('a callback listing costs its rows too: 500 take 5, the default 50 takes 1', async () => {
    const { tenantId, jwt } = await accessToken(running, gateway);
    const list = (query: string) =>
      fetch(`${gateway.url}/api/v1/callbacks${query}`, { headers: { authorization: `Bearer ${jwt}` } });
    expect((await list('?limit=500')).status).toBe(200);
    expect(await tokensOf(running, `tenant:${tenantId}`)).toBeGreaterThanOrEqual(45);
    expect(await tokensOf(running, `tenant:${tenantId}`)).toBeLessThan(46);
    expect((await list('')).status).toBe(200);
    expect(await tokensOf(running, `tenant:${tenantId}`)).toBeLessThan(45);
    expect(await tokensOf(running, `tenant:${tenantId}`)).toBeGreaterThanOrEqual(44);
  });

  it('costs at most the whole burst: the largest page under a burst of 10 waits, it is not refused for good', async () => {
    const small = await slowRefill(running, 10);
    try {
      const { tenantId, jwt } = await accessToken(running, small);
      expect((await search(jwt, 5_000, small)).status).toBe(200);
      expect(await tokensOf(running, `tenant:${tenantId}`)).toBeLessThan(1);
    } finally {
      await small.stop();
    }
  });
});

describe('the authentication and download limits, shared by two gateway instances on one database', () => {
  let running: Running;
  let second: RunningGateway;
  beforeAll(async () => {
    running = await start({
      RATE_LIMIT_AUTH_PER_MINUTE: '4',
      RATE_LIMIT_AUTH_TOKEN_PER_MINUTE: '0',
      RATE_LIMIT_DOWNLOADS_PER_MINUTE: '2',
    });
    second = await startGateway(running.config, silent);
  });
  afterAll(async () => {
    await second?.stop();
    await running?.stop();
  });

  const authenticate = (gateway: RunningGateway, token: string) =>
    fetch(`${gateway.url}/api/v1/authenticate`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });

  it('counts /authenticate from one address on both instances together', async () => {
    const first = running.gateway;
    const tenant = await createTenant(running.db, 'Shared auth limit');
    expect((await authenticate(first, tenant.integration_token)).status).toBe(200);
    expect((await authenticate(second, tenant.integration_token)).status).toBe(200);
    expect((await authenticate(first, 'not-a-token')).status).toBe(401);
    expect((await authenticate(second, 'not-a-token')).status).toBe(401);
    // Four calls on two instances: the address's minute is spent on both.
    for (const gateway of [first, second]) {
      const refused = await authenticate(gateway, tenant.integration_token);
      expect(await outcome(refused)).toEqual({ status: 429, code: 'rate_limited', retryAfter: true });
    }
  });

  it('counts signed downloads from one address on both instances together', async () => {
    const link = (gateway: RunningGateway, path: string) =>
      `${gateway.url}${path}/${randomUUID()}?expires=1&signature=forged`;
    expect((await fetch(link(running.gateway, BOOKLET_DOWNLOAD_PATH))).status).toBe(403);
    expect((await fetch(link(second, SLIP_PDF_PATH))).status).toBe(403);
    for (const gateway of [running.gateway, second]) {
      const refused = await fetch(link(gateway, BOOKLET_DOWNLOAD_PATH));
      expect(await outcome(refused)).toEqual({ status: 429, code: 'rate_limited', retryAfter: true });
    }
  });
});
