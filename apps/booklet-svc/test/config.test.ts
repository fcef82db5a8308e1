import { ConfigError } from '@payments/config';
import { loadBookletConfig } from '../src/config';

it('pools 10 Postgres connections unless DATABASE_POOL_SIZE says otherwise', () => {
  expect(loadBookletConfig({}).databasePoolSize).toBe(10);
  expect(loadBookletConfig({ DATABASE_POOL_SIZE: '5' }).databasePoolSize).toBe(5);
  expect(() => loadBookletConfig({ DATABASE_POOL_SIZE: '0' })).toThrow(ConfigError);
});

it('keeps booklet files 30 days unless BOOKLET_FILE_RETENTION_DAYS says otherwise', () => {
  expect(loadBookletConfig({}).fileRetentionDays).toBe(30);
  expect(loadBookletConfig({ BOOKLET_FILE_RETENTION_DAYS: '7' }).fileRetentionDays).toBe(7);
  expect(() => loadBookletConfig({ BOOKLET_FILE_RETENTION_DAYS: '0' })).toThrow(ConfigError);
});
