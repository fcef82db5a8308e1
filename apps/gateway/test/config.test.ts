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

it('fails start-up on an unusable value, naming the variable', () => {
  expect(() => loadGatewayConfig({ PORT: 'eighty' })).toThrow(ConfigError);
  expect(() => loadGatewayConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  expect(() => loadGatewayConfig({ NODE_ENV: 'staging' })).toThrow(/NODE_ENV/);
  expect(() => loadGatewayConfig({ JWT_TTL_SECONDS: '0' })).toThrow(/JWT_TTL_SECONDS/);
});
