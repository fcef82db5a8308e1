import { randomBytes, randomUUID } from 'node:crypto';
import { BOOKLET_DOWNLOAD_PATH, SLIP_PDF_PATH } from '@payments/contracts';
import type { GatewayContext } from '../src/transport/http/context';
import { clientAddress, credentialKey } from '../src/transport/http/rate-limit';
import type { RunningGateway } from '../src/server';
import { createTenant } from '../src/domain/tenancy/tenant-admin';
import { startGatewayUnderTest as start, type GatewayUnderTest as Running } from './support/gateway-under-test';

/*
 * The auth endpoints are limited per client address and per credential, the signed
 * downloads per client address; over a limit, 429 problem+json with Retry-After. Each gateway here
 * runs with limits small enough to reach in a few requests.
 */

function authenticate(gateway: RunningGateway, token: string, headers: Record<string, string> = {}) {
  return fetch(`${gateway.url}/api/v1/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...headers },
  });
}

function refresh(gateway: RunningGateway, jwt: string) {
  return fetch(`${gateway.url}/api/v1/refresh-token`, { method: 'POST', headers: { authorization: `Bearer ${jwt}` } });
}

/** A 429 as the ERP sees it: problem+json rate_limited, Retry-After within the minute window. */
async function expectRateLimited(res: Response, what: RegExp): Promise<void> {
  expect(res.status).toBe(429);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  const body = (await res.json()) as { code: string; status: number; detail: string };
  expect(body).toMatchObject({ code: 'rate_limited', status: 429 });
  expect(body.detail).toMatch(what);
}

describe('per client address', () => {
  let running: Running;
  beforeAll(async () => {
    running = await start({
      RATE_LIMIT_AUTH_PER_MINUTE: '4',
      RATE_LIMIT_AUTH_TOKEN_PER_MINUTE: '0',
      RATE_LIMIT_DOWNLOADS_PER_MINUTE: '2',
    });
  });
  afterAll(() => running?.stop());

  it('counts /authenticate and /refresh-token together, whatever X-Forwarded-For claims, then answers 429', async () => {
    const { gateway } = running;
    const tenant = await createTenant(running.db, 'Limited by address');
    const first = await authenticate(gateway, tenant.integration_token);
    expect(first.status).toBe(200);
    const jwt = ((await first.json()) as { access_token: string }).access_token;
    expect((await refresh(gateway, jwt)).status).toBe(200);
    expect((await authenticate(gateway, 'not-a-token')).status).toBe(401);
    // Without trusted proxies the header is the client's own word: it does not make a new address.
    expect((await authenticate(gateway, 'not-a-token', { 'x-forwarded-for': '203.0.113.9' })).status).toBe(401);

    await expectRateLimited(
      await authenticate(gateway, tenant.integration_token, { 'x-forwarded-for': '198.51.100.7' }),
      /authentication calls from this address/,
    );
    await expectRateLimited(await refresh(gateway, jwt), /authentication calls from this address/);
  });

  it('limits signed downloads per address, booklets and slip files in one count, before the link is checked', async () => {
    const { gateway } = running;
    const booklet = `${gateway.url}${BOOKLET_DOWNLOAD_PATH}/${randomUUID()}?expires=1&signature=forged`;
    const slip = `${gateway.url}${SLIP_PDF_PATH}/${randomUUID()}?expires=1&signature=forged`;
    expect((await fetch(booklet)).status).toBe(403);
    expect((await fetch(slip)).status).toBe(403);
    await expectRateLimited(await fetch(booklet), /downloads from this address/);
    await expectRateLimited(await fetch(slip), /downloads from this address/);
    // The API itself is not a download: a bearer-token route still answers as before (401 here).
    expect((await fetch(`${gateway.url}/api/v1/callbacks`)).status).toBe(401);
  });
});

describe('per credential', () => {
  let running: Running;
  beforeAll(async () => {
    running = await start({ RATE_LIMIT_AUTH_PER_MINUTE: '100', RATE_LIMIT_AUTH_TOKEN_PER_MINUTE: '3' });
  });
  afterAll(() => running?.stop());

  it('answers 429 to a fourth /authenticate with one integration token, while another token still passes', async () => {
    const { gateway } = running;
    const hammered = await createTenant(running.db, 'Hammering');
    const other = await createTenant(running.db, 'Quiet');
    for (let i = 0; i < 3; i++) expect((await authenticate(gateway, hammered.integration_token)).status).toBe(200);
    await expectRateLimited(
      await authenticate(gateway, hammered.integration_token),
      /authentication calls with this credential/,
    );
    expect((await authenticate(gateway, other.integration_token)).status).toBe(200);
  });

  it('limits /refresh-token per access token, also when the token is not valid', async () => {
    const { gateway } = running;
    const forged = `eyJhbGciOiJFZERTQSJ9.${randomBytes(12).toString('base64url')}.sig`;
    for (let i = 0; i < 3; i++) expect((await refresh(gateway, forged)).status).toBe(401);
    await expectRateLimited(await refresh(gateway, forged), /authentication calls with this credential/);
  });
});

describe('clientAddress', () => {
  const request = (peer: string, forwardedFor?: string) =>
    ({
      req: { socket: { remoteAddress: peer } },
      get: (name: string) => (name === 'x-forwarded-for' ? (forwardedFor ?? '') : ''),
    }) as unknown as GatewayContext;

  it('is the TCP peer without trusted proxies, whatever X-Forwarded-For says', () => {
    expect(clientAddress(request('192.0.2.1', '203.0.113.9'), 0)).toBe('192.0.2.1');
  });

  it('is the entry the nearest trusted proxy appended, never one the client wrote further left', () => {
    // The client forged 203.0.113.9; its real address 198.51.100.7 was appended by the one proxy.
    expect(clientAddress(request('10.0.0.5', '203.0.113.9, 198.51.100.7'), 1)).toBe('198.51.100.7');
    expect(clientAddress(request('10.0.0.5', '203.0.113.9, 198.51.100.7, 10.0.0.4'), 2)).toBe('198.51.100.7');
    // Fewer entries than proxies: every entry is a proxy's; no header at all: the peer.
    expect(clientAddress(request('10.0.0.5', '198.51.100.7'), 2)).toBe('198.51.100.7');
    expect(clientAddress(request('10.0.0.5'), 1)).toBe('10.0.0.5');
  });
});

it('keys a credential by its SHA-256, never by the token itself', () => {
  const key = credentialKey('itok_secret_value');
  expect(key).toMatch(/^[\w-]{43}$/);
  expect(key).not.toContain('itok');
});
