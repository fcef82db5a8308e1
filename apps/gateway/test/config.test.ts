import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEV_CREDENTIALS_ENCRYPTION_KEY } from '@payments/credential-seal';
import { ConfigError } from '@payments/config';
import { loadGatewayConfig } from '../src/config';

it('has defaults that work on a developer machine', () => {
  const config = loadGatewayConfig({});
  expect(config).toMatchObject({
    nodeEnv: 'development',
    port: 3000,
    databaseUrl: 'postgres://postgres@127.0.0.1:5432/receivables',
    natsUrl: 'nats://127.0.0.1:4222',
    jwt: { ttlSeconds: 3600 },
    bodyLimitBytes: 1024 * 1024,
    idempotency: { ttlHours: 24 },
  });
});

it('pools 10 Postgres connections unless DATABASE_POOL_SIZE says otherwise', () => {
  expect(loadGatewayConfig({}).databasePoolSize).toBe(10);
  expect(loadGatewayConfig({ DATABASE_POOL_SIZE: '3' }).databasePoolSize).toBe(3);
  expect(() => loadGatewayConfig({ DATABASE_POOL_SIZE: 'many' })).toThrow(/DATABASE_POOL_SIZE/);
});

it('fails start-up on an unusable value, naming the variable', () => {
  expect(() => loadGatewayConfig({ PORT: 'eighty' })).toThrow(ConfigError);
  expect(() => loadGatewayConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  expect(() => loadGatewayConfig({ NODE_ENV: 'staging' })).toThrow(/NODE_ENV/);
  expect(() => loadGatewayConfig({ JWT_TTL_SECONDS: '0' })).toThrow(/JWT_TTL_SECONDS/);
  expect(() => loadGatewayConfig({ RATE_LIMIT_BURST: '0' })).toThrow(/RATE_LIMIT_BURST/);
});

describe('production', () => {
  const ed25519 = () => generateKeyPairSync('ed25519');
  const privatePem = () => ed25519().privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicPem = () => ed25519().publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const secrets = {
    NODE_ENV: 'production',
    JWT_PRIVATE_KEY: privatePem(),
    DOWNLOAD_LINK_SECRET: 'a-production-link-secret',
    CREDENTIALS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    NATS_USER: 'gateway',
    NATS_PASSWORD: 'a-production-bus-password',
  };

  it('starts with secrets of its own', () => {
    expect(loadGatewayConfig(secrets)).toMatchObject({ nodeEnv: 'production', jwt: { previousPublicKeys: [] } });
  });

  it('refuses to start without them, naming every variable in one message', () => {
    const load = () =>
      loadGatewayConfig({
        NODE_ENV: 'production',
        DOWNLOAD_LINK_SECRET: 'development-download-link-secret',
        CREDENTIALS_ENCRYPTION_KEY: DEV_CREDENTIALS_ENCRYPTION_KEY,
      });
    expect(load).toThrow(ConfigError);
    for (const problem of [
      'JWT_PRIVATE_KEY is missing',
      'DOWNLOAD_LINK_SECRET is the public development default',
      'CREDENTIALS_ENCRYPTION_KEY is the public development default',
      'NATS_USER/NATS_PASSWORD or NATS_CREDS is missing',
    ])
      expect(load).toThrow(problem);
  });

  it('reads the JWT key from a file, and the previous public keys of a rotation', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-config-'));
    const keyFile = join(dir, 'jwt.pem');
    writeFileSync(keyFile, secrets.JWT_PRIVATE_KEY);
    const previous = [publicPem(), publicPem()];
    const config = loadGatewayConfig({
      ...secrets,
      JWT_PRIVATE_KEY: undefined,
      JWT_PRIVATE_KEY_FILE: keyFile,
      JWT_PREVIOUS_PUBLIC_KEYS: previous.join(''),
    });
    expect(config.jwt.privateKey).toBe(secrets.JWT_PRIVATE_KEY);
    expect(config.jwt.previousPublicKeys.map((p) => p.trim())).toEqual(previous.map((p) => p.trim()));
    expect(() => loadGatewayConfig({ ...secrets, JWT_PRIVATE_KEY_FILE: keyFile })).toThrow(
      'set JWT_PRIVATE_KEY or JWT_PRIVATE_KEY_FILE, not both',
    );
    expect(() => loadGatewayConfig({ ...secrets, JWT_PREVIOUS_PUBLIC_KEYS: 'not a key' })).toThrow(
      /JWT_PREVIOUS_PUBLIC_KEYS/,
    );
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' });
    expect(() => loadGatewayConfig({ ...secrets, JWT_PREVIOUS_PUBLIC_KEYS: rsa.toString() })).toThrow(
      'JWT_PREVIOUS_PUBLIC_KEYS: key 1 must be an Ed25519 key',
    );
  });
});
