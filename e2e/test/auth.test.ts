import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { disableTenant, openAdminDatabase, revokeToken } from '@payments/gateway';
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

function expectUnauthorized(res: { status: number; statusText: string; headers: Headers; json: unknown }) {
  expect(res.status).toBe(401);
  expect(res.statusText).toBe('UNAUTHORIZED');
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  expect(res.json).toMatchObject({ title: 'UNAUTHORIZED', status: 401, code: 'unauthorized' });
}

describe('POST /api/v1/authenticate', () => {
  it('exchanges the integration token for an EdDSA JWT with the agreed claims', async () => {
    const tenant = await system.newTenant('Acme');
    const res = await system.api.post<{ access_token: string; token_type: string; expires_in: number }>('/api/v1/authenticate', undefined, { authorization: `Bearer ${tenant.integrationToken}` });
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
    expectUnauthorized(await system.api.post('/api/v1/authenticate', undefined, { authorization: 'Bearer itk_not-a-real-token' }));
    expectUnauthorized(await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${tenant.accessToken}` }));
    expectUnauthorized(await system.api.post('/api/v1/authenticate', undefined, { authorization: tenant.integrationToken }));
  });
});

describe('POST /api/v1/refresh-token', () => {
  it('renews a valid JWT with token_type "bearer", and the new one works', async () => {
    const tenant = await system.newTenant();
    const res = await tenant.api.post<{ access_token: string; token_type: string; expires_in: number }>('/api/v1/refresh-token');
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
    expectUnauthorized(await system.api.post('/api/v1/refresh-token', undefined, { authorization: 'Bearer abc.def.ghi' }));
    expectUnauthorized(await system.api.post('/api/v1/refresh-token', undefined, { authorization: `Bearer ${tenant.integrationToken}` }));
  });
});

describe('protected endpoints', () => {
  const badCredentials: Array<[string, (tenantId: string) => Promise<string | undefined>]> = [
    ['no Authorization header', async () => undefined],
    ['a non-Bearer scheme', async () => 'Basic dXNlcjpwYXNz'],
    ['Bearer without a token', async () => 'Bearer '],
    ['a malformed token', async () => 'Bearer not-a-jwt'],
    ['a token signed by another key', async (tenantId) => `Bearer ${await foreignToken(tenantId)}`],
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
    expectUnauthorized(await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${tenant.integrationToken}` }));
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
    expectUnauthorized(await system.api.post('/api/v1/authenticate', undefined, { authorization: `Bearer ${tenant.integrationToken}` }));
  });
});

describe('expiry', () => {
  let shortLived: TestSystem;
  beforeAll(async () => {
    shortLived = await startSystem({ env: { JWT_TTL_SECONDS: '1' } });
  });
  afterAll(async () => {
    await shortLived?.stop();
  });

  it('refuses an expired JWT on protected endpoints and on refresh', async () => {
    const tenant = await shortLived.newTenant();
    expect((await tenant.api.postIdempotent('/api/v1/clients', [clientPayload()])).status).toBe(201);
    await new Promise((r) => setTimeout(r, 2100));
    const res = await tenant.api.postIdempotent('/api/v1/clients', [clientPayload()]);
    expectUnauthorized(res);
    expect((res.json as { detail: string }).detail).toMatch(/expired/);
    expectUnauthorized(await tenant.api.post('/api/v1/refresh-token'));
    expect(await countClients(shortLived.databaseUrl, tenant.tenantId)).toBe(1);
  });
});

async function foreignToken(tenantId: string): Promise<string> {
  const { privateKey } = generateKeyPairSync('ed25519');
  return new SignJWT({ token_id: randomUUID() })
    .setProtectedHeader({ alg: 'EdDSA' })
    .setIssuer('payments-gateway')
    .setAudience('payments-api')
    .setSubject(tenantId)
    .setIssuedAt()
    .setExpirationTime('1h')
    .setJti(randomUUID())
    .sign(privateKey);
}

function unsignedToken(tenantId: string): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ iss: 'payments-gateway', aud: 'payments-api', sub: tenantId, iat: now, exp: now + 3600, jti: randomUUID(), token_id: randomUUID() })}.`;
}
