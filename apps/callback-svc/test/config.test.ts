import { ConfigError } from '@payments/config';
import { loadCallbackConfig } from '../src/config';

it('pools 20 Postgres connections unless DATABASE_POOL_SIZE says otherwise', () => {
  expect(loadCallbackConfig({}).databasePoolSize).toBe(20);
  expect(loadCallbackConfig({ DATABASE_POOL_SIZE: '8' }).databasePoolSize).toBe(8);
  expect(() => loadCallbackConfig({ DATABASE_POOL_SIZE: '0' })).toThrow(ConfigError);
});

it('keeps delivered callbacks 90 days unless CALLBACK_RETENTION_DAYS says otherwise', () => {
  expect(loadCallbackConfig({}).retentionDays).toBe(90);
  expect(loadCallbackConfig({ CALLBACK_RETENTION_DAYS: '30' }).retentionDays).toBe(30);
  expect(() => loadCallbackConfig({ CALLBACK_RETENTION_DAYS: '0' })).toThrow(ConfigError);
});
