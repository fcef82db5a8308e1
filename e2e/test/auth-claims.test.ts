import { createHash, createPrivateKey, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { AuthenticateResponse, Problem } from '@payments/contracts';
import { countClients, queryRows } from '../support/db-probe';
import { clientPayload } from '../support/fixtures';
import { startSystem, type TestSystem, type TestTenant } from '../support/system';

// What auth.test.ts leaves open: a JWT signed with the gateway's own key but for another issuer or
// audience, and integration tokens kept only as hashes. In development the gateway generates its
// Ed25519 key on first start and keeps it in gateway.jwt_keys (apps/gateway/src/domain/auth/signing-keys.ts):
// the test reads it from there, as a second gateway instance would.

let system: TestSystem;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await system?.stop();
});

async function gatewayKey(): Promise<{ kid: string; privateKey: ReturnType<typeof createPrivateKey> }> {
  const rows = await queryRows<{ kid: string; private_key_pem: string }>(
    system.databaseUrl,
    'select kid, private_key_pem from gateway.jwt_keys order by created_at desc limit 1',
  );
  expect(rows).toHaveLength(1);
  return { kid: rows[0].kid, privateKey: createPrivateKey(rows[0].private_key_pem) };
}

/** A JWT as the gateway issues it (apps/gateway/src/domain/auth/access-tokens.ts), with iss and aud chosen by the test. */
async function signedToken(tenant: TestTenant, claims: { iss: string; aud: string }): Promise<string> {
  const key = await gatewayKey();
  return new SignJWT({ token_id: tenant.tokenId })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: key.kid })
    .setIssuer(claims.iss)
    .setAudience(claims.aud)
    .setSubject(tenant.tenantId)
    .setIssuedAt()
    .setExpirationTime('1h')
    .setJti(randomUUID())
    .sign(key.privateKey);
}

describe('a JWT signed with the gateway key', () => {
  it('is accepted with the gateway issuer and audience (the key is the right one)', async () => {
    const tenant = await system.newTenant('Right claims');
    const token = await signedToken(tenant, { iss: 'payments-gateway', aud: 'payments-api' });
    const res = await system.api.withToken(token).postIdempotent('/api/v1/clients', [clientPayload()]);
    expect(res.status).toBe(201);
  });

  it.each([
    ['another issuer', { iss: 'someone-else', aud: 'payments-api' }],
    ['another audience', { iss: 'payments-gateway', aud: 'another-api' }],
  ])(
    'is refused with 401 for %s, on protected endpoints and on refresh, and nothing is stored',
    async (_label, claims) => {
      const tenant = await system.newTenant('Wrong claims');
      const token = await signedToken(tenant, claims);
      const api = system.api.withToken(token);
      const res = await api.postIdempotent<Problem>('/api/v1/clients', [clientPayload()]);
      expect(res.status).toBe(401);
      expect(res.statusText).toBe('UNAUTHORIZED');
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.json).toMatchObject({ title: 'UNAUTHORIZED', status: 401 });
      expect((await api.post('/api/v1/refresh-token')).status).toBe(401);
      expect(
        (
          await api.post('/api/v1/accounts-receivable/search', {
            state: 'all',
            start_date: '2026-01-01',
            end_date: '2026-12-31',
          })
        ).status,
      ).toBe(401);
      expect(await countClients(system.databaseUrl, tenant.tenantId)).toBe(0);
    },
  );
});

describe('integration tokens at rest', () => {
  it('are stored only as a SHA-256 hash and a short hint: the plaintext is nowhere in the tokens table', async () => {
    const tenant = await system.newTenant('Hashed');
    expect(tenant.integrationToken).toMatch(/^itk_[A-Za-z0-9_-]{43}$/);
    const rows = await queryRows<{ id: string; token_hash: Buffer; token_hint: string; whole: string }>(
      system.databaseUrl,
      'select id, token_hash, token_hint, t::text as whole from gateway.integration_tokens t where tenant_id = $1',
      [tenant.tenantId],
    );
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row.id).toBe(tenant.tokenId);
    expect(row.token_hash.equals(createHash('sha256').update(tenant.integrationToken, 'utf8').digest())).toBe(true);
    expect(tenant.integrationToken.startsWith(row.token_hint)).toBe(true);
    expect(row.token_hint.length).toBeLessThanOrEqual(10); // itk_ and 6 characters of the 43 random ones
    const secret = tenant.integrationToken.slice('itk_'.length);
    expect(row.whole).not.toContain(secret.slice(6)); // no part of the token beyond the hint, in any column
    expect(row.whole).not.toContain(Buffer.from(tenant.integrationToken).toString('hex'));
    // Not in any other gateway table either (tenants, idempotency records, keys).
    const elsewhere = await queryRows<{ n: string }>(
      system.databaseUrl,
      `select (select count(*) from gateway.tenants t where strpos(t::text, $1) > 0)
            + (select count(*) from gateway.idempotency_keys k where strpos(k::text, $1) > 0) as n`,
      [secret],
    );
    expect(Number(elsewhere[0].n)).toBe(0);
    // And the hash is what authenticates: the token works.
    const auth = await system.api.post<AuthenticateResponse>('/api/v1/authenticate', undefined, {
      authorization: `Bearer ${tenant.integrationToken}`,
    });
    expect(auth.status).toBe(200);
  });
});
