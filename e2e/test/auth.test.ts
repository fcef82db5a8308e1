import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import type { AuthenticateResponse, Problem, RefreshTokenResponse } from '@payments/contracts';
import { disableTenant, openAdminDatabase, revokeToken } from '@payments/gateway';
import type { ApiResponse } from '../support/api-client';
import { startSystem, type TestSystem } from '../support/system';
import { clientPayload } from '../support/fixtures';
import { countClients } from '../support/db-probe';

let system: TestSystem;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await system?.stop();
});

/** The 401 details that tell an ERP developer the way out. */
const EXPIRED =
  'the access token has expired: get a new one from POST /api/v1/authenticate with your integration token (POST /api/v1/refresh-token renews an access token before it expires)';
const INTEGRATION_TOKEN_HERE =
  'this is an integration token: exchange it for an access token (JWT) at POST /api/v1/authenticate (Authorization: Bearer <integration token>) and send that access token here';
const ACCESS_TOKEN_HERE =
  'this is an access token (JWT), not an integration token: POST /api/v1/authenticate takes the integration token issued for your tenant; to renew an access token, POST /api/v1/refresh-token with it';

const detailOf = (res: ApiResponse) => (res.json as Problem).detail;

function expectUnauthorized(res: ApiResponse, code: 'unauthorized' | 'token_expired' = 'unauthorized') {
  expect(res.status).toBe(401);
  expect(res.statusText).toBe('UNAUTHORIZED');
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  expect(res.headers.get('www-authenticate')).toBe('Bearer realm="api", error="invalid_token"');
  expect(res.json).toMatchObject({ title: 'UNAUTHORIZED', status: 401, code });
}

describe('POST /api/v1/authenticate', () => {
  it('exchanges the integration token for an EdDSA JWT with the agreed claims', async () => {
    const tenant = await system.newTenant('Acme');
    const res = await system.api.post<AuthenticateResponse>('/api/v1/authenticate', undefined, {
      authorization: `Bearer ${tenant.integrationToken}`,
    });
    expect(res.status).toBe(200);
    expect(res.json.token_type).toBe('Bearer');
    expect(res.json.expires_in).toBe(3600);
    const header = decodeProtectedHeader(res.json.access_token);
    expect(header.alg).toBe('EdDSA');
    const claims = decodeJwt(res.json.access_token);
    expect(claims).toMatchObject({ iss: 'payments-gateway', aud: 'payments-api', sub: tenant.tenantId });
    expect(typeof claims.jti).toBe('string');
    expect(claims.exp! - claims.iat!).toBe(3600);
  });

  it('refuses a missing, garbage or JWT credential with 401', async () => {
    const tenant = await system.newTenant();
    expectUnauthorized(await system.api.post('/api/v1/authenticate'));
    expectUnauthorized(
      await system.api.post('/api/v1/authenticate', undefined, { authorization: 'Bearer itk_not-a-real-token' }),
    );
    expectUnauthorized(
      await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${tenant.accessToken}` }),
    );
    expectUnauthorized(
      await system.api.post('/api/v1/authenticate', undefined, { authorization: tenant.integrationToken }),
    );
  });

  it('says an access token (JWT) is not what it takes, and where that one goes', async () => {
    const tenant = await system.newTenant();
    const res = await system.api.post('/api/v1/authenticate', undefined, {
      authorization: `Bearer ${tenant.accessToken}`,
    });
    expectUnauthorized(res);
    expect(detailOf(res)).toBe(ACCESS_TOKEN_HERE);
    const unknown = await system.api.post('/api/v1/authenticate', undefined, {
      authorization: 'Bearer itk_not-a-real-token',
    });
    expect(detailOf(unknown)).toBe('the integration token is not valid or was revoked');
  });
});

describe('POST /api/v1/refresh-token', () => {
  it('renews a valid JWT with token_type "bearer", and the new one works', async () => {
    const tenant = await system.newTenant();
    const res = await tenant.api.post<RefreshTokenResponse>('/api/v1/refresh-token');
    expect(res.status).toBe(200);
    expect(res.json.token_type).toBe('bearer');
    expect(res.json.expires_in).toBe(3600);
    expect(res.json.access_token).not.toBe(tenant.accessToken);
    expect(decodeJwt(res.json.access_token).sub).toBe(tenant.tenantId);
    const use = await system.api.withToken(res.json.access_token).postIdempotent('/api/v1/clients', [clientPayload()]);
    expect(use.status).toBe(201);
  });

  it('refuses a garbage token and the integration token', async () => {
    const tenant = await system.newTenant();
    expectUnauthorized(
      await system.api.post('/api/v1/refresh-token', undefined, { authorization: 'Bearer abc.def.ghi' }),
    );
    const withIntegrationToken = await system.api.post('/api/v1/refresh-token', undefined, {
      authorization: `Bearer ${tenant.integrationToken}`,
    });
    expectUnauthorized(withIntegrationToken);
    expect(detailOf(withIntegrationToken)).toBe(INTEGRATION_TOKEN_HERE);
  });
});

describe('protected endpoints', () => {
  const badCredentials: Array<[string, (tenantId: string) => Promise<string | undefined>]> = [
    ['no Authorization header', async () => undefined],
    ['a non-Bearer scheme', async () => 'Basic dXNlcjpwYXNz'],
    ['Bearer without a token', async () => 'Bearer '],
    ['a malformed token', async () => 'Bearer not-a-jwt'],
    ['a token signed by another key', async (tenantId) => `Bearer ${await foreignToken(tenantId)}`],
    // Expired, but not ours: invalid first (token_expired is for a token of ours only).
    ['an expired token signed by another key', async (tenantId) => `Bearer ${await foreignToken(tenantId, -60)}`],
    ['an unsigned (alg none) token', async (tenantId) => `Bearer ${unsignedToken(tenantId)}`],
  ];

  it.each(badCredentials)('answers 401 to %s and does not process the request', async (_label, credential) => {
    const tenant = await system.newTenant();
    const auth = await credential(tenant.tenantId);
    const headers: Record<string, string> = { 'idempotency-key': randomUUID() };
    if (auth !== undefined) headers.authorization = auth;
    const res = await system.api.post('/api/v1/clients', [clientPayload()], headers);
    expectUnauthorized(res);
    expect(await countClients(system.databaseUrl, tenant.tenantId)).toBe(0);
  });

  it('says an integration token sent where the access token belongs is to be exchanged at /authenticate', async () => {
    const tenant = await system.newTenant();
    const api = system.api.withToken(tenant.integrationToken);
    for (const res of [
      await api.postIdempotent('/api/v1/clients', [clientPayload()]),
      await api.send('GET', '/api/v1/callbacks'),
    ]) {
      expectUnauthorized(res);
      expect(detailOf(res)).toBe(INTEGRATION_TOKEN_HERE);
    }
    expect(await countClients(system.databaseUrl, tenant.tenantId)).toBe(0);
  });

  it('says where an access token comes from when none is sent', async () => {
    const res = await system.api.postIdempotent('/api/v1/clients', [clientPayload()]);
    expectUnauthorized(res);
    expect(detailOf(res)).toBe(
      'send Authorization: Bearer <access token>; POST /api/v1/authenticate with your integration token returns one',
    );
  });

  it('answers 401 once the integration token behind the JWT is revoked', async () => {
    const tenant = await system.newTenant();
    expect((await tenant.api.postIdempotent('/api/v1/clients', [clientPayload()])).status).toBe(201);
    const db = await openAdminDatabase(system.databaseUrl);
    try {
      await revokeToken(db, tenant.tokenId);
    } finally {
      await db.destroy();
    }
    expectUnauthorized(await tenant.api.postIdempotent('/api/v1/clients', [clientPayload()]));
    expectUnauthorized(await tenant.api.post('/api/v1/refresh-token'));
    expectUnauthorized(
      await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${tenant.integrationToken}` }),
    );
    expect(await countClients(system.databaseUrl, tenant.tenantId)).toBe(1);
  });

  it('answers 401 for a disabled tenant', async () => {
    const tenant = await system.newTenant();
    const db = await openAdminDatabase(system.databaseUrl);
    try {
      await disableTenant(db, tenant.tenantId);
    } finally {
      await db.destroy();
    }
    expectUnauthorized(await tenant.api.postIdempotent('/api/v1/clients', [clientPayload()]));
    expectUnauthorized(
      await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${tenant.integrationToken}` }),
    );
  });
});

describe('expiry', () => {
  let shortLived: TestSystem;
  beforeAll(async () => {
    // 3 s: the first call must still find it valid on a loaded machine (two e2e shards at once).
    shortLived = await startSystem({ env: { JWT_TTL_SECONDS: '3' } });
  });
  afterAll(async () => {
    await shortLived?.stop();
  });

  it('refuses an expired JWT on protected endpoints and on refresh with code token_expired', async () => {
    const tenant = await shortLived.newTenant();
    expect((await tenant.api.postIdempotent('/api/v1/clients', [clientPayload()])).status).toBe(201);
    await new Promise((r) => setTimeout(r, 4100));
    const res = await tenant.api.postIdempotent('/api/v1/clients', [clientPayload()]);
    expectUnauthorized(res, 'token_expired');
    expect(detailOf(res)).toBe(EXPIRED);
    expect((res.json as Problem).type).toBe('/problems/token-expired');
    const refresh = await tenant.api.post('/api/v1/refresh-token');
    expectUnauthorized(refresh, 'token_expired');
    expect(detailOf(refresh)).toBe(EXPIRED);
    expect(await countClients(shortLived.databaseUrl, tenant.tenantId)).toBe(1);
  });
});

describe('a request to no route', () => {
  it.each(['/', '/api/v1', '/api/v1/client'])(
    'GET %s: a 404 problem that points at the API reference, which is there',
    async (path) => {
      const res = await system.api.send<Problem>('GET', path);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.json).toMatchObject({
        status: 404,
        code: 'not_found',
        detail: `no route GET ${path}: the API reference is at /docs (OpenAPI document: /api/v1/openapi.json)`,
      });
      expect((await system.api.send('GET', '/docs')).status).toBe(200);
      expect((await system.api.send('GET', '/api/v1/openapi.json')).status).toBe(200);
    },
  );
});

/** A well-formed JWT of another key; `expiresInSeconds` negative: already expired. */
async function foreignToken(tenantId: string, expiresInSeconds = 3600): Promise<string> {
  const { privateKey } = generateKeyPairSync('ed25519');
  return new SignJWT({ token_id: randomUUID() })
    .setProtectedHeader({ alg: 'EdDSA' })
    .setIssuer('payments-gateway')
    .setAudience('payments-api')
    .setSubject(tenantId)
    .setIssuedAt(Math.floor(Date.now() / 1000) - 120)
    .setExpirationTime(Math.floor(Date.now() / 1000) + expiresInSeconds)
    .setJti(randomUUID())
    .sign(privateKey);
}

function unsignedToken(tenantId: string): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ iss: 'payments-gateway', aud: 'payments-api', sub: tenantId, iat: now, exp: now + 3600, jti: randomUUID(), token_id: randomUUID() })}.`;
}
