import { DEFAULT_SCHEDULE_MS, nextRetryDelay, parseRetryAfter } from '../src/domain/retry-policy';

const policy = { scheduleMs: DEFAULT_SCHEDULE_MS, jitterPercent: 20 };

it('follows the documented schedule (docs/api.md, Callbacks), within the jitter', () => {
  const expected = [5, 30, 120, 600, 1800, 3600, 10800, 21600, 43200, 86400].map((s) => s * 1000);
  expected.forEach((base, i) => {
    expect(nextRetryDelay(policy, i + 1, null, () => 0)).toBe(base * 0.8);
    expect(nextRetryDelay(policy, i + 1, null, () => 0.5)).toBe(base);
    expect(nextRetryDelay(policy, i + 1, null, () => 0.999999)).toBeLessThanOrEqual(base * 1.2);
  });
});

it('gives up after the last delay (the event is dead)', () => {
  expect(nextRetryDelay(policy, 11)).toBeNull();
  expect(nextRetryDelay({ scheduleMs: [100, 200], jitterPercent: 0 }, 3)).toBeNull();
  expect(nextRetryDelay({ scheduleMs: [100, 200], jitterPercent: 0 }, 2)).toBe(200);
});

it('waits at least as long as Retry-After asks, capped at a day', () => {
  expect(nextRetryDelay(policy, 1, 60_000, () => 0.5)).toBe(60_000);
  expect(nextRetryDelay(policy, 1, 1_000, () => 0.5)).toBe(5_000);
  expect(nextRetryDelay(policy, 1, 10 * 86_400_000, () => 0.5)).toBe(86_400_000);
});

it('reads Retry-After as seconds or an HTTP date', () => {
  const now = new Date('2026-11-23T10:00:00Z');
  expect(parseRetryAfter('120', now)).toBe(120_000);
  expect(parseRetryAfter('Mon, 23 Nov 2026 10:01:00 GMT', now)).toBe(60_000);
  expect(parseRetryAfter('soon', now)).toBeNull();
  expect(parseRetryAfter(null, now)).toBeNull();
});
