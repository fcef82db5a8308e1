import { randomBytes, randomUUID } from 'node:crypto';
import { ConfigError } from '@payments/config';
import { DEV_CREDENTIALS_ENCRYPTION_KEY, seal } from '@payments/credential-seal';
import { loadReceivablesConfig } from '../src/config';
import type { ProviderAccount } from '../src/domain/ports';
import {
  CredentialsUnavailableError,
  InterCredentialSource,
  interCredentialOpener,
} from '../src/transport/providers/credentials';
import { interWebhookUrl } from '../src/transport/providers/providers';

describe('receivables-svc config', () => {
  const production = {
    NODE_ENV: 'production',
    DOWNLOAD_LINK_SECRET: 'a-production-link-secret',
    CREDENTIALS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    PROVIDER_API_KEY: 'a-production-api-key',
    PROVIDER_WEBHOOK_SECRET: 'whsec_cHJvZHVjdGlvbi13ZWJob29rLXNlY3JldA==',
    NATS_USER: 'receivables-svc',
    NATS_PASSWORD: 'a-production-bus-password',
    RECEIVABLES_PUBLIC_URL: 'https://webhooks.payments.example.com',
  };

  it('defaults for development: the public credentials key, webhooks on its own port, links to the gateway', () => {
    const config = loadReceivablesConfig({ RECEIVABLES_PORT: '3210', PORT: '8080' });
    expect(config.credentialsEncryptionKey.current.key).toEqual(Buffer.from(DEV_CREDENTIALS_ENCRYPTION_KEY, 'base64'));
    expect(config.credentialsEncryptionKey.previous).toEqual([]);
    expect(config.publicUrl).toBe('http://127.0.0.1:3210');
    expect(interWebhookUrl(config.publicUrl, 'acc')).toBe('http://127.0.0.1:3210/provider/webhooks/inter/acc');
    expect(config.publicBaseUrl).toBe('http://localhost:8080');
    // In development an inter account without a base URL reaches the bank sandbox's Inter dialect.
    expect(config.inter.baseUrl).toBe('https://127.0.0.1:3101/inter');
  });

  it('pools 20 Postgres connections unless DATABASE_POOL_SIZE says otherwise', () => {
    expect(loadReceivablesConfig({}).databasePoolSize).toBe(20);
    expect(loadReceivablesConfig({ DATABASE_POOL_SIZE: '6' }).databasePoolSize).toBe(6);
    expect(() => loadReceivablesConfig({ DATABASE_POOL_SIZE: '0' })).toThrow(ConfigError);
  });

  it('refuses production without CREDENTIALS_ENCRYPTION_KEY, with the development one, or a malformed one, naming it', () => {
    expect(() => loadReceivablesConfig(production)).not.toThrow();
    for (const key of [undefined, DEV_CREDENTIALS_ENCRYPTION_KEY]) {
      const load = () => loadReceivablesConfig({ ...production, CREDENTIALS_ENCRYPTION_KEY: key });
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(/CREDENTIALS_ENCRYPTION_KEY/);
    }
    expect(() => loadReceivablesConfig({ CREDENTIALS_ENCRYPTION_KEY: 'c2hvcnQ=' })).toThrow(
      /CREDENTIALS_ENCRYPTION_KEY/,
    );
    expect(() => loadReceivablesConfig({ ...production, DOWNLOAD_LINK_SECRET: undefined })).toThrow(
      /DOWNLOAD_LINK_SECRET/,
    );
  });

  it('names every missing or development secret in one refusal', () => {
    const load = () =>
      loadReceivablesConfig({
        NODE_ENV: 'production',
        PROVIDER_API_KEY: 'sandbox-api-key',
        PROVIDER_WEBHOOK_SECRET: 'sandbox-webhook-secret',
      });
    expect(load).toThrow(ConfigError);
    for (const variable of [
      'PROVIDER_API_KEY is the public development default',
      'PROVIDER_WEBHOOK_SECRET is the public development default',
      'CREDENTIALS_ENCRYPTION_KEY is missing',
      'DOWNLOAD_LINK_SECRET is missing',
      'NATS_USER/NATS_PASSWORD or NATS_CREDS is missing',
    ])
      expect(load).toThrow(variable);
  });
});

describe('credential opener', () => {
  const key = randomBytes(32);
  const credentials = { client_id: 'id-1', client_secret: 'very-secret', cert_pem: 'CERT', key_pem: 'PRIVATE KEY' };
  const account = (sealedCredentials: string | null, id = randomUUID()): ProviderAccount => ({
    id,
    tenantId: randomUUID(),
    provider: 'inter',
    accountKey: 'inter-key',
    beneficiary: { name: 'X', tax_id: '1', city: null, pix_key: null, agency: null, account: null, address: null },
    baseUrl: null,
    sealedCredentials,
  });

  it("opens an account's own credentials", () => {
    const id = randomUUID();
    expect(interCredentialOpener(key)(account(seal(key, JSON.stringify(credentials), id), id))).toEqual(credentials);
  });

  it("refuses another account's sealed value, a wrong key, none, or something else, without quoting the secret", () => {
    const sealedForOther = seal(key, JSON.stringify(credentials), randomUUID());
    const id = randomUUID();
    const cases = [
      account(sealedForOther),
      account(seal(randomBytes(32), JSON.stringify(credentials), id), id),
      account(null),
      account(seal(key, JSON.stringify({ client_id: 'id-1', client_secret: 'very-secret' }), id), id),
      account(seal(key, 'very-secret not json', id), id),
    ];
    for (const c of cases) {
      let error: unknown;
      try {
        interCredentialOpener(key)(c);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(CredentialsUnavailableError);
      expect((error as Error).message).toContain(c.id);
      expect((error as Error).message).not.toMatch(/very-secret|PRIVATE KEY/);
    }
  });

  it("uses the newest credentials of the same bank account, asks at most once per TTL, and falls back to the charge's own", async () => {
    const ownId = randomUUID();
    const newerId = randomUUID();
    const own = account(seal(key, JSON.stringify(credentials), ownId), ownId);
    const renewed = { ...credentials, client_secret: 'renewed-secret' };
    const newer = { versionId: newerId, sealed: seal(key, JSON.stringify(renewed), newerId) };
    const asked: string[] = [];
    let answer: () => Promise<{ versionId: string; sealed: string | null } | null> = () => Promise.resolve(newer);
    const source = new InterCredentialSource(
      key,
      (tenantId, accountKey) => {
        asked.push(`${tenantId}:${accountKey}`);
        return answer();
      },
      50,
    );
    expect(await source.credentialsFor(own)).toEqual({ versionId: newerId, credentials: renewed });
    expect(await source.credentialsFor(own)).toEqual({ versionId: newerId, credentials: renewed });
    expect(asked).toEqual([`${own.tenantId}:inter-key`]); // cached
    await new Promise((r) => setTimeout(r, 60));
    answer = () => Promise.reject(new Error('gateway out of reach'));
    expect((await source.credentialsFor(own)).versionId).toBe(newerId); // what it knew last
    answer = () => Promise.resolve(null);
    const fresh = new InterCredentialSource(key, () => answer(), 0);
    expect(await fresh.credentialsFor(own)).toEqual({ versionId: ownId, credentials });
    answer = () => Promise.reject(new Error('gateway out of reach'));
    expect(await fresh.credentialsFor(own)).toEqual({ versionId: ownId, credentials });
  });

  it('opens credentials sealed with a previous key after CREDENTIALS_ENCRYPTION_KEY was rotated', () => {
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const id = randomUUID();
    const sealedBefore = seal(oldKey, JSON.stringify(credentials), id);
    const rotated = loadReceivablesConfig({
      CREDENTIALS_ENCRYPTION_KEY: newKey.toString('base64'),
      CREDENTIALS_PREVIOUS_KEYS: oldKey.toString('base64'),
    }).credentialsEncryptionKey;
    expect(interCredentialOpener(rotated)(account(sealedBefore, id))).toEqual(credentials);
    const withoutOld = loadReceivablesConfig({ CREDENTIALS_ENCRYPTION_KEY: newKey.toString('base64') });
    expect(() => interCredentialOpener(withoutOld.credentialsEncryptionKey)(account(sealedBefore, id))).toThrow(
      CredentialsUnavailableError,
    );
  });
});
