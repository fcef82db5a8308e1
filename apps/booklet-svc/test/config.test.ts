import { ConfigError } from '@payments/config';
import { loadBookletConfig } from '../src/config';

it('pools 10 Postgres connections unless DATABASE_POOL_SIZE says otherwise', () => {
  expect(loadBookletConfig({}).databasePoolSize).toBe(10);
  expect(loadBookletConfig({ DATABASE_POOL_SIZE: '5' }).databasePoolSize).toBe(5);
  expect(() => loadBookletConfig({ DATABASE_POOL_SIZE: '0' })).toThrow(ConfigError);
});
