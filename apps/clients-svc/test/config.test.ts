import { ConfigError } from '@payments/config';
import { loadClientsConfig } from '../src/config';

it('pools 10 Postgres connections unless DATABASE_POOL_SIZE says otherwise', () => {
  expect(loadClientsConfig({}).databasePoolSize).toBe(10);
  expect(loadClientsConfig({ DATABASE_POOL_SIZE: '3' }).databasePoolSize).toBe(3);
  expect(() => loadClientsConfig({ DATABASE_POOL_SIZE: '1.5' })).toThrow(ConfigError);
});
