import { formatBrazilianDate, formatPercent, formatReais } from '../src';

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
