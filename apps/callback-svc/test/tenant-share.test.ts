import { ConfigError } from '@payments/config';
import { loadCallbackConfig } from '../src/config';
import { tenantShareOf } from '../src/domain/delivery-engine';

it('gives each tenant a quarter of the slots and of the hold unless CALLBACK_TENANT_SHARE_PERCENT says otherwise', () => {
  const config = loadCallbackConfig({});
  expect(config.tenantSharePercent).toBe(25);
  expect(tenantShareOf(config.concurrency, config.tenantSharePercent)).toBe(64);
  expect(tenantShareOf(config.maxHeld, config.tenantSharePercent)).toBe(5_000);
  expect(loadCallbackConfig({ CALLBACK_TENANT_SHARE_PERCENT: '100' }).tenantSharePercent).toBe(100);
  expect(() => loadCallbackConfig({ CALLBACK_TENANT_SHARE_PERCENT: '0' })).toThrow(ConfigError);
  expect(() => loadCallbackConfig({ CALLBACK_TENANT_SHARE_PERCENT: '101' })).toThrow(ConfigError);
});

it('never shares out less than one slot', () => {
  expect(tenantShareOf(3, 25)).toBe(1);
  expect(tenantShareOf(256, 100)).toBe(256);
});
