import { generateKeyPairSync } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { GatewayDatabase } from '../src/db/schema';
import { loadSigningKeys, MissingSigningKeyError } from '../src/auth/signing-keys';
import { issueAccessToken, verifyAccessToken } from '../src/auth/access-tokens';

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
