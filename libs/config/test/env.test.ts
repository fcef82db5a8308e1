import { ConfigError, envBool, envEnum, envInt, envIntList, loadCommonConfig } from '../src';

it('reads typed values with defaults', () => {
  expect(envInt('N', 5, {})).toBe(5);
  expect(envInt('N', 5, { N: '7' })).toBe(7);
  expect(envBool('B', false, { B: 'yes' })).toBe(true);
  expect(envEnum('E', ['a', 'b'] as const, 'a', { E: 'b' })).toBe('b');
  expect(envIntList('L', [1], { L: '5000, 30000' })).toEqual([5000, 30000]);
});

it('refuses unusable values with the variable named', () => {
  expect(() => envInt('N', 5, { N: '1.5' })).toThrow(ConfigError);
  expect(() => envBool('B', false, { B: 'maybe' })).toThrow(/B must be/);
  expect(() => envEnum('E', ['a'] as const, 'a', { E: 'z' })).toThrow(/E must be one of a/);
  expect(() => envIntList('L', [], { L: '1,x' })).toThrow(/L must be/);
});

it('treats NODE_ENV=test as development', () => {
  expect(loadCommonConfig({ NODE_ENV: 'test' }).nodeEnv).toBe('development');
  expect(loadCommonConfig({ NODE_ENV: 'production' }).nodeEnv).toBe('production');
});

it('reads STREAM_REPLICAS, one by default and never fewer', () => {
  expect(loadCommonConfig({}).streamReplicas).toBe(1);
  expect(loadCommonConfig({ STREAM_REPLICAS: '3' }).streamReplicas).toBe(3);
  expect(() => loadCommonConfig({ STREAM_REPLICAS: '0' })).toThrow(/STREAM_REPLICAS must be an integer >= 1/);
});

describe('DATABASE_POOL_SIZE', () => {
  it('defaults to 10, or to the default the app gives, and reads the variable over both', () => {
    expect(loadCommonConfig({}).databasePoolSize).toBe(10);
    expect(loadCommonConfig({}, { databasePoolSize: 20 }).databasePoolSize).toBe(20);
    expect(loadCommonConfig({ DATABASE_POOL_SIZE: '4' }, { databasePoolSize: 20 }).databasePoolSize).toBe(4);
    expect(loadCommonConfig({ DATABASE_POOL_SIZE: '' }, { databasePoolSize: 20 }).databasePoolSize).toBe(20);
  });

  it.each(['0', '-1', '2.5', 'ten'])('refuses %p, naming the variable', (value) => {
    const load = () => loadCommonConfig({ DATABASE_POOL_SIZE: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(`DATABASE_POOL_SIZE must be an integer >= 1, got "${value}"`);
  });
});
