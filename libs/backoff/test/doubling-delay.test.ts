import { doublingDelayMs } from '../src';

describe('doublingDelayMs', () => {
  const delay = { firstMs: 250, maxMs: 5_000 };

  it('starts at firstMs and doubles per attempt', () => {
    expect([1, 2, 3, 4, 5].map((a) => doublingDelayMs(a, delay))).toEqual([250, 500, 1_000, 2_000, 4_000]);
  });

  it('stops at maxMs', () => {
    expect(doublingDelayMs(6, delay)).toBe(5_000);
    expect(doublingDelayMs(10_000, delay)).toBe(5_000);
  });

  it('treats attempts below 1 as the first', () => {
    expect(doublingDelayMs(0, delay)).toBe(250);
    expect(doublingDelayMs(-3, delay)).toBe(250);
  });

  it('stays a number however many attempts, also from 0 ms', () => {
    expect(doublingDelayMs(5_000, { firstMs: 0, maxMs: 1_000 })).toBe(0);
    expect(doublingDelayMs(Number.MAX_SAFE_INTEGER, { firstMs: 1, maxMs: 30_000 })).toBe(30_000);
  });
});
