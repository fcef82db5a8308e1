import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, SignJWT } from 'jose';
import type { Kysely } from 'kysely';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { GatewayDatabase } from '../src/db/schema';
import { loadSigningKeys, MissingSigningKeyError } from '../src/domain/auth/signing-keys';
import { issueAccessToken, verifyAccessToken } from '../src/domain/auth/access-tokens';

let db: Kysely<GatewayDatabase>;
let drop: () => Promise<void>;
beforeAll(async () => {
  const test = await createTestDatabase();
  drop = test.drop;
  db = createDatabase<GatewayDatabase>({ url: test.url, schema: SCHEMA });
  await migrateToLatest(db, SCHEMA, migrations);
});
afterAll(async () => {
  await db?.destroy();
  await drop?.();
});

const settings = { issuer: 'i', audience: 'a', ttlSeconds: 60 };

it('development: generates one key on first start and every instance reuses it', async () => {
  const [a, b] = await Promise.all([loadSigningKeys(db, 'development'), loadSigningKeys(db, 'development')]);
  const c = await loadSigningKeys(db, 'development');
  expect(new Set([a.kid, b.kid, c.kid]).size).toBe(1);
  const { token } = await issueAccessToken(a, settings, 'tenant-1', 'token-1');
  await expect(verifyAccessToken(c, settings, token)).resolves.toMatchObject({
    tenantId: 'tenant-1',
    tokenId: 'token-1',
  });
});

it('production: requires JWT_PRIVATE_KEY, and it must be Ed25519', async () => {
  await expect(loadSigningKeys(db, 'production')).rejects.toBeInstanceOf(MissingSigningKeyError);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  await expect(loadSigningKeys(db, 'production', rsa)).rejects.toThrow(/Ed25519/);
  const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const keys = await loadSigningKeys(db, 'production', ed);
  const { token } = await issueAccessToken(keys, settings, 't', 'k');
  await expect(verifyAccessToken(keys, settings, token)).resolves.toMatchObject({ tenantId: 't' });
  // A token from the development key does not verify under the production key.
  const dev = await loadSigningKeys(db, 'development');
  const devToken = (await issueAccessToken(dev, settings, 't', 'k')).token;
  await expect(verifyAccessToken(keys, settings, devToken)).rejects.toThrow(/not valid/);
});

describe('key rotation', () => {
  const pemPair = () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    return {
      privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    };
  };

  it('signs with the current key, its kid in the header, and verifies tokens of the previous keys listed', async () => {
    const [older, previous, next] = [pemPair(), pemPair(), pemPair()];
    const before = await loadSigningKeys(db, 'production', previous.privatePem);
    const oldToken = (await issueAccessToken(before, settings, 'tenant-r', 'token-r')).token;
    expect(decodeProtectedHeader(oldToken)).toMatchObject({ alg: 'EdDSA', kid: before.kid });

    // The rotation: a new private key, the one it replaces listed as a previous public key.
    const after = await loadSigningKeys(db, 'production', next.privatePem, [older.publicPem, previous.publicPem]);
    expect(after.kid).not.toBe(before.kid);
    expect(after.verificationKeys.size).toBe(3);
    const newToken = (await issueAccessToken(after, settings, 'tenant-r', 'token-r')).token;
    expect(decodeProtectedHeader(newToken).kid).toBe(after.kid);
    await expect(verifyAccessToken(after, settings, oldToken)).resolves.toMatchObject({ tenantId: 'tenant-r' });
    await expect(verifyAccessToken(after, settings, newToken)).resolves.toMatchObject({ tenantId: 'tenant-r' });

    // Once the previous key is no longer listed, its tokens are refused; the old gateway never knew the new key.
    const done = await loadSigningKeys(db, 'production', next.privatePem);
    await expect(verifyAccessToken(done, settings, oldToken)).rejects.toThrow(/not valid/);
    await expect(verifyAccessToken(before, settings, newToken)).rejects.toThrow(/not valid/);
  });

  it('refuses a token whose kid is not one of its keys, even when the signature is good', async () => {
    const current = pemPair();
    const keys = await loadSigningKeys(db, 'production', current.privatePem);
    const sign = (header: { alg: 'EdDSA'; kid?: string }) =>
      new SignJWT({ token_id: 'k' })
        .setProtectedHeader(header)
        .setIssuer(settings.issuer)
        .setAudience(settings.audience)
        .setSubject('t')
        .setIssuedAt()
        .setExpirationTime('1m')
        .setJti('j')
        .sign(keys.privateKey);
    await expect(verifyAccessToken(keys, settings, await sign({ alg: 'EdDSA', kid: keys.kid }))).resolves.toBeDefined();
    await expect(verifyAccessToken(keys, settings, await sign({ alg: 'EdDSA', kid: 'someone-else' }))).rejects.toThrow(
      /not valid/,
    );
    await expect(verifyAccessToken(keys, settings, await sign({ alg: 'EdDSA' }))).rejects.toThrow(/not valid/);
  });

  it('production never writes its key to the database', async () => {
    const current = pemPair();
    const keys = await loadSigningKeys(db, 'production', current.privatePem);
    const stored = await db.selectFrom('jwt_keys').select('kid').execute();
    expect(stored.map((r) => r.kid)).not.toContain(keys.kid);
  });
});
