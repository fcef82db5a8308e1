import {
  band,
  clock,
  formatValue,
  lineRuns,
  maxOf,
  PLOT,
  timeLabels,
  valueTicks,
  yOf,
} from '../src/views/charts/scale';

/** `count` bucket starts of `seconds` each, the first at `first`. */
function starts(first: string, count: number, seconds: number): string[] {
  const t0 = Date.parse(first);
  return Array.from({ length: count }, (_, i) => new Date(t0 + i * seconds * 1000).toISOString());
}

describe('valueTicks', () => {
  it.each([
    [0, [0, 1]],
    [-3, [0, 1]],
    [Number.NaN, [0, 1]],
    [1, [0, 1]],
    [3, [0, 1, 2, 3]],
    [7, [0, 2, 4, 6, 8]],
    [10, [0, 5, 10]],
    [12, [0, 5, 10, 15]],
    [99, [0, 50, 100]],
    [1234, [0, 500, 1000, 1500]],
    [40_000, [0, 10_000, 20_000, 30_000, 40_000]],
  ])('from 0 to at least %p in round steps', (max, expected) => {
    const ticks = valueTicks(max);
    expect(ticks).toEqual(expected);
    expect(ticks[ticks.length - 1]).toBeGreaterThanOrEqual(Number.isFinite(max) ? max : 0);
  });
});

it('formatValue shortens large numbers and adds the unit', () => {
  expect(formatValue(0)).toBe('0');
  expect(formatValue(950, 'ms')).toBe('950 ms');
  expect(formatValue(9_999)).toBe('9999');
  expect(formatValue(12_500)).toBe('12.5k');
  expect(formatValue(40_000)).toBe('40k');
  expect(formatValue(1_500_000)).toBe('1.5M');
});

describe('timeLabels', () => {
  it('an hour of minutes: a label every 10 minutes, on round times, in Brasília time', () => {
    const hour = starts('2026-11-26T08:53:00.000Z', 60, 60);
    expect(timeLabels(hour, 60)).toEqual([
      { index: 7, text: '06:00' },
      { index: 17, text: '06:10' },
      { index: 27, text: '06:20' },
      { index: 37, text: '06:30' },
      { index: 47, text: '06:40' },
      { index: 57, text: '06:50' },
    ]);
  });

  it('a day of 15 minutes: a label every 3 hours', () => {
    const day = starts('2026-11-25T09:15:00.000Z', 96, 900);
    const labels = timeLabels(day, 900);
    expect(labels.map((l) => l.text)).toEqual(['09:00', '12:00', '15:00', '18:00', '21:00', '00:00', '03:00', '06:00']);
    expect(labels[0]).toEqual({ index: 11, text: '09:00' });
  });

  it('other bucket sizes: about six labels spread evenly; bad dates are skipped', () => {
    const week = starts('2026-11-19T00:00:00.000Z', 42, 14_400);
    expect(timeLabels(week, 14_400).map((l) => l.index)).toEqual([0, 7, 14, 21, 28, 35]);
    expect(timeLabels(['not a date', '2026-11-26T09:00:00.000Z'], 60)).toEqual([{ index: 1, text: '06:00' }]);
    expect(timeLabels([], 60)).toEqual([]);
  });

  it('clock is HH:MM in Brasília time (UTC-3)', () => {
    expect(clock(Date.parse('2026-11-26T23:59:59.999Z'))).toBe('20:59');
    expect(clock(Date.parse('2026-11-27T02:30:00.000Z'))).toBe('23:30');
  });
});

describe('geometry', () => {
  it('bands split the plot evenly and centre each bucket', () => {
    const width = (PLOT.right - PLOT.left) / 60;
    expect(band(0, 60)).toEqual({ center: PLOT.left + width / 2, width });
    expect(band(59, 60).center).toBeCloseTo(PLOT.right - width / 2);
  });

  it('yOf maps 0 to the bottom, the top to the top, and clamps', () => {
    expect(yOf(0, 10)).toBe(PLOT.bottom);
    expect(yOf(10, 10)).toBe(PLOT.top);
    expect(yOf(5, 10)).toBe((PLOT.top + PLOT.bottom) / 2);
    expect(yOf(-1, 10)).toBe(PLOT.bottom);
    expect(yOf(20, 10)).toBe(PLOT.top);
  });

  it('lineRuns breaks a line where a bucket has no value', () => {
    const runs = lineRuns([1, 2, null, null, 4, null, 5], 10);
    expect(runs.map((run) => run.map((p) => p.index))).toEqual([[0, 1], [4], [6]]);
    expect(runs[0]![1]).toMatchObject({ value: 2, y: yOf(2, 10), x: band(1, 7).center });
    expect(lineRuns([null, null], 10)).toEqual([]);
  });

  it('maxOf: of every value, or of the stacked sums', () => {
    expect(
      maxOf([
        [1, null, 3],
        [2, 2],
      ]),
    ).toBe(3);
    expect(
      maxOf(
        [
          [1, null, 3],
          [2, 2],
        ],
        true,
      ),
    ).toBe(3);
    expect(
      maxOf(
        [
          [1, 4, 3],
          [2, 2, 2],
        ],
        true,
      ),
    ).toBe(6);
    expect(maxOf([[null], []])).toBe(0);
  });
});
