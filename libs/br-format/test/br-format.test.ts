import {
  formatBrazilianDate,
  formatPercent,
  formatReais,
  formatTypeableLine,
  fromCents,
  hasAtMostTwoDecimals,
  toCents,
} from '../src';

it('writes reais with thousands dots and decimal comma', () => {
  expect(formatReais(123_456_789)).toBe('R$ 1.234.567,89');
  expect(formatReais(5)).toBe('R$ 0,05');
  expect(formatReais(100_000_000)).toBe('R$ 1.000.000,00');
  expect(formatReais(-150)).toBe('-R$ 1,50');
});

it('writes percentages from basis points and dates day first', () => {
  expect(formatPercent(200)).toBe('2,00%');
  expect(formatPercent(1_050)).toBe('10,50%');
  expect(formatBrazilianDate('2026-12-10')).toBe('10/12/2026');
});

it('prints a typeable line in its usual groups, and only a 47-digit one', () => {
  // test-vectors/boleto.json
  expect(formatTypeableLine('23790448095616862379336011058009740430000124020')).toBe(
    '23790.44809 56168.623793 36011.058009 7 40430000124020',
  );
  expect(() => formatTypeableLine('2379044809561686237933601105800974043000012402')).toThrow(/47 digits/);
  expect(() => formatTypeableLine('23790.44809 56168.623793 36011.058009 7 40430000124020')).toThrow(/47 digits/);
});

describe('reais and cents', () => {
  it('hasAtMostTwoDecimals', () => {
    for (const v of [0, 1, 0.1, 0.29, 10.29, 150.5, 1_234_567_890.12, 8_765_432_109.87, 9_999_999_999.99, -3.75])
      expect(hasAtMostTwoDecimals(v)).toBe(true);
    for (const v of [10.005, 1.001, 0.001, 12.345, 0.1 + 0.2, NaN, Infinity, -Infinity, 1e-7, 1e15])
      expect(hasAtMostTwoDecimals(v)).toBe(false);
  });

  it('is exact for every cent value at large magnitudes', () => {
    const wrong: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      const cents = Math.floor(Math.random() * 999_999_999_999);
      if (!(hasAtMostTwoDecimals(cents / 100) && toCents(cents / 100) === cents && fromCents(cents) === cents / 100))
        wrong.push(cents);
    }
    expect(wrong).toEqual([]);
  });

  it('toCents', () => {
    expect(toCents(10.29)).toBe(1029);
    expect(toCents(0.29)).toBe(29);
    expect(toCents(12.34)).toBe(1234);
    expect(toCents(100.5)).toBe(10050);
    expect(toCents(0.01)).toBe(1);
    expect(toCents(9_999_999_999.99)).toBe(999_999_999_999);
    expect(toCents(-3.75)).toBe(-375);
    expect(Object.is(toCents(-0), 0)).toBe(true);
    expect(() => toCents(10.005)).toThrow(RangeError);
    expect(() => toCents(0.1 + 0.2)).toThrow(RangeError);
    expect(() => toCents(NaN)).toThrow(RangeError);
  });

  it('fromCents', () => {
    expect(fromCents(123_450)).toBe(1234.5);
    expect(fromCents(1)).toBe(0.01);
    expect(fromCents(0)).toBe(0);
  });
});
