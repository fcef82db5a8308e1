import { ConfigError } from '@payments/config';
import { loadCallbackConfig } from '../src/config';

it('pools 20 Postgres connections unless DATABASE_POOL_SIZE says otherwise', () => {
  expect(loadCallbackConfig({}).databasePoolSize).toBe(20);
  expect(loadCallbackConfig({ DATABASE_POOL_SIZE: '8' }).databasePoolSize).toBe(8);
  expect(() => loadCallbackConfig({ DATABASE_POOL_SIZE: '0' })).toThrow(ConfigError);
});
