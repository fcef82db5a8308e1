import {
  busCredentialChecks,
  ConfigError,
  developmentUnlessSet,
  loadCommonConfig,
  productionSecretProblems,
  requireProductionSecrets,
  runMode,
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
});
