import { randomBytes } from 'node:crypto';
import {
  busCredentialChecks,
  ConfigError,
  databaseCredentialChecks,
  DEVELOPMENT_NATS_PASSWORDS,
  developmentUnlessSet,
  isDevelopmentDefault,
  loadCommonConfig,
  productionSecretProblems,
  requireProductionSecrets,
  runMode,
  sameSecret,
} from '../src';

describe('run mode', () => {
  it('is production unless NODE_ENV says development or test', () => {
    expect(runMode({ NODE_ENV: 'production' })).toBe('production');
    expect(runMode({ NODE_ENV: 'development' })).toBe('development');
    expect(runMode({ NODE_ENV: 'test' })).toBe('development');
    expect(loadCommonConfig({ NODE_ENV: 'production' }).nodeEnv).toBe('production');
    expect(() => runMode({ NODE_ENV: 'staging' })).toThrow(/NODE_ENV must be one of production, development, test/);
  });

  it('is production when this process sets no NODE_ENV either', () => {
    const saved = process.env.NODE_ENV;
    try {
      delete process.env.NODE_ENV;
      expect(runMode({})).toBe('production');
      expect(runMode()).toBe('production');
      expect(loadCommonConfig({}).nodeEnv).toBe('production');
      process.env.NODE_ENV = 'test';
      // An environment built for an app started in-process takes the process's mode (jest: test).
      expect(runMode({})).toBe('development');
      expect(runMode({ NODE_ENV: 'production' })).toBe('production');
    } finally {
      process.env.NODE_ENV = saved;
    }
  });

  it('defaults to development for the developer tools only when NODE_ENV is unset', () => {
    expect(developmentUnlessSet({ A: '1' })).toEqual({ A: '1', NODE_ENV: 'development' });
    expect(developmentUnlessSet({ NODE_ENV: '' })).toEqual({ NODE_ENV: 'development' });
    expect(developmentUnlessSet({ NODE_ENV: 'production' })).toEqual({ NODE_ENV: 'production' });
  });
});

describe('production secrets', () => {
  const checks = [
    { variable: 'A_SECRET', value: undefined, hint: 'openssl rand -base64 32' },
    { variable: 'B_SECRET', value: 'dev-b', developmentDefaults: ['dev-b'] },
    { variable: 'C_SECRET', value: 'real', developmentDefaults: ['dev-c'] },
    { variable: 'D_SECRET', value: '' },
  ];

  it('names every missing or development secret, not only the first', () => {
    expect(productionSecretProblems(checks)).toEqual([
      'A_SECRET is missing (openssl rand -base64 32)',
      'B_SECRET is the public development default',
      'D_SECRET is missing',
    ]);
  });

  it('throws one ConfigError listing them all in production, nothing in development', () => {
    expect(() => requireProductionSecrets('development', checks)).not.toThrow();
    expect(() => requireProductionSecrets('production', [checks[2]])).not.toThrow();
    let error: unknown;
    try {
      requireProductionSecrets('production', checks);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['A_SECRET', 'B_SECRET', 'D_SECRET']) expect(message).toContain(name);
    expect(message).not.toContain('C_SECRET');
    expect(message).not.toContain('dev-b'); // a secret's value is never shown
  });

  it('wants NATS_USER with NATS_PASSWORD, or NATS_CREDS', () => {
    const problems = (c: Parameters<typeof busCredentialChecks>[0]) => productionSecretProblems(busCredentialChecks(c));
    expect(problems({})).toEqual([
      "NATS_USER/NATS_PASSWORD or NATS_CREDS is missing (this service's own NATS user, see deploy/nats)",
    ]);
    expect(problems({ natsUser: 'gateway' })).toEqual(['NATS_PASSWORD is missing (the password of NATS_USER)']);
    expect(problems({ natsPassword: 'p' })).toEqual([
      "NATS_USER is missing (this service's own NATS user, see deploy/nats)",
    ]);
    expect(problems({ natsUser: 'gateway', natsPassword: 'p' })).toEqual([]);
    // docker-compose's fallback passwords are public: refused like any development default.
    expect(problems({ natsUser: 'gateway', natsPassword: 'development-nats-gateway' })).toEqual([
      'NATS_PASSWORD is the public development default',
    ]);
    expect(problems({ natsCreds: '/run/secrets/gateway.creds' })).toEqual([]);
  });

  it("refuses the admin CLI's and the provisioning user's development passwords too", () => {
    for (const [user, password] of [
      ['admin-cli', 'development-nats-admin-cli'],
      ['admin', 'development-nats-admin'],
      // A user deploy/nats may gain later: its development password is refused by its prefix.
      ['reports-svc', 'development-nats-reports-svc'],
    ])
      expect(productionSecretProblems(busCredentialChecks({ natsUser: user, natsPassword: password }))).toEqual([
        'NATS_PASSWORD is the public development default',
      ]);
    expect(DEVELOPMENT_NATS_PASSWORDS).toContain('development-nats-admin-cli');
  });

  it("refuses compose's Postgres password in DATABASE_URL, and wants none", () => {
    const problems = (url: string) => productionSecretProblems(databaseCredentialChecks({ databaseUrl: url }));
    expect(problems('postgres://postgres:postgres@postgres:5432/receivables')).toEqual([
      "DATABASE_URL's password is the public development default",
    ]);
    expect(problems('postgres://app:postgres%0A@db/receivables')).toEqual([
      "DATABASE_URL's password is the public development default",
    ]);
    // No password (a client certificate, a .pgpass file) or a real one: nothing to say.
    expect(problems('postgres://postgres@127.0.0.1:5432/receivables')).toEqual([]);
    expect(problems(`postgres://app:p${randomBytes(12).toString('hex')}@db/receivables`)).toEqual([]);
  });

  it('takes a value of white space only as missing', () => {
    expect(productionSecretProblems([{ variable: 'A_SECRET', value: ' \n' }])).toEqual(['A_SECRET is missing']);
  });
});

/**
 * The development CREDENTIALS_ENCRYPTION_KEY, as libs/credential-seal declares it (its 32 bytes in
 * base64, `=` padded): written here, as libs/config depends on no other lib.
 */
const DEV_KEY = Buffer.from('development-credentials-key-0001').toString('base64');
const DEV_KEY_BYTES = Buffer.from('development-credentials-key-0001');

describe('near misses of a development secret are the development secret', () => {
  const refused = (variable: string, value: string, defaults: string[]) =>
    productionSecretProblems([{ variable, value, developmentDefaults: defaults }]);

  it.each([
    ['with a trailing newline', `${DEV_KEY}\n`],
    ['with spaces around it', `  ${DEV_KEY} `],
    ['without its = padding', DEV_KEY.replace(/=+$/, '')],
    ['in base64url', DEV_KEY_BYTES.toString('base64url')],
    ['in hex', DEV_KEY_BYTES.toString('hex')],
    ['in upper-case hex, with a newline', `${DEV_KEY_BYTES.toString('hex').toUpperCase()}\r\n`],
  ])('the development CREDENTIALS_ENCRYPTION_KEY %s is refused', (_, value) => {
    expect(refused('CREDENTIALS_ENCRYPTION_KEY', value, [DEV_KEY])).toEqual([
      'CREDENTIALS_ENCRYPTION_KEY is the public development default',
    ]);
  });

  it.each([
    ['without its = padding', (k: Buffer) => k.toString('base64').replace(/=+$/, '')],
    ['in base64url', (k: Buffer) => k.toString('base64url')],
    ['in hex', (k: Buffer) => k.toString('hex')],
    ['with a trailing newline', (k: Buffer) => `${k.toString('base64')}\n`],
  ])('a listed key %s is that key, by its bytes alone', (_, encode) => {
    // Bytes that start with no `development-`: only the comparison by bytes can refuse them.
    const known = Buffer.from('fbff'.repeat(16), 'hex');
    expect(refused('SOME_KEY', encode(known), [known.toString('base64')])).toEqual([
      'SOME_KEY is the public development default',
    ]);
  });

  it('refuses a key whose bytes begin like every development default, though no list names it', () => {
    expect(refused('SOME_KEY', DEV_KEY.replace(/=+$/, ''), [])).toEqual(['SOME_KEY is the public development default']);
  });

  it.each([
    ['with a trailing newline', 'sandbox-webhook-secret\n'],
    ['with a tab before it', '\tsandbox-webhook-secret'],
    [
      'as a Standard Webhooks secret of the same bytes',
      `whsec_${Buffer.from('sandbox-webhook-secret').toString('base64')}`,
    ],
  ])('a development text secret %s is refused', (_, value) => {
    expect(refused('PROVIDER_WEBHOOK_SECRET', value, ['sandbox-webhook-secret'])).toEqual([
      'PROVIDER_WEBHOOK_SECRET is the public development default',
    ]);
  });

  it.each([
    ['with a trailing newline', 'development-nats-admin-cli\n'],
    ['with spaces', ' development-nats-gateway '],
  ])('a development NATS password %s is refused', (_, password) => {
    expect(productionSecretProblems(busCredentialChecks({ natsUser: 'gateway', natsPassword: password }))).toEqual([
      'NATS_PASSWORD is the public development default',
    ]);
  });

  it('accepts real secrets, in any of those encodings, with a newline', () => {
    const key = randomBytes(32);
    for (const value of [
      key.toString('base64'),
      `${key.toString('base64')}\n`,
      key.toString('base64url'),
      key.toString('hex'),
      `whsec_${key.toString('base64')}`,
      'a real, long and random text secret',
    ])
      expect(refused('CREDENTIALS_ENCRYPTION_KEY', value, [DEV_KEY, 'sandbox-webhook-secret'])).toEqual([]);
    expect(
      productionSecretProblems(
        busCredentialChecks({ natsUser: 'admin-cli', natsPassword: `p${randomBytes(24).toString('hex')}` }),
      ),
    ).toEqual([]);
  });

  it('compares by bytes, and says no to what only looks alike', () => {
    expect(sameSecret(DEV_KEY, DEV_KEY_BYTES.toString('hex'))).toBe(true);
    expect(sameSecret('sandbox-api-key', 'sandbox-api-key2')).toBe(false);
    expect(sameSecret('sandbox-api-key', 'SANDBOX-API-KEY')).toBe(false);
    expect(isDevelopmentDefault('my-development-secret')).toBe(false);
  });
});
