import { h } from 'preact';
import { render } from 'preact-render-to-string';
import { LineChart, StackedBarChart, type TimeChartProps } from '../src/views/charts';
import { lineDescription } from '../src/views/charts/line-chart';
import { barDescription } from '../src/views/charts/stacked-bar-chart';

// 12:00 UTC is 09:00 in Brasília, the time the charts show.
const HOUR_FROM = Date.parse('2026-11-26T12:00:00.000Z');
const hour = Array.from({ length: 60 }, (_, i) => new Date(HOUR_FROM + i * 60_000).toISOString());

function deliveries(values: { delivered: number[]; failed: number[]; dead: number[] }): TimeChartProps {
  return {
    id: 'deliveries',
    title: 'Deliveries per minute',
    starts: hour,
    bucketSeconds: 60,
    series: [
      { key: 'delivered', label: 'delivered', color: '#2e7d32', values: values.delivered },
      { key: 'failed', label: 'failed', color: '#ef6c00', values: values.failed },
      { key: 'dead', label: 'dead', color: '#c62828', values: values.dead },
    ],
  };
}

/** The <rect class="bar"> of one series' group, as markup. */
function bars(svg: string, key: string): string[] {
  const group = new RegExp(`<g class="series series-${key}"[^>]*>(.*?)</g>`).exec(svg)?.[1] ?? '';
  return group.match(/<rect class="bar"[^>]*>/g) ?? [];
}

const zeros = () => new Array<number>(60).fill(0);

describe('StackedBarChart', () => {
  it('draws one bar segment per non-zero value, stacked in series order, with an accessible name', () => {
    const delivered = zeros();
    const failed = zeros();
    const dead = zeros();
    delivered[10] = 8;
    failed[10] = 2;
    delivered[59] = 3;
    dead[30] = 1;
    const svg = render(h(StackedBarChart, deliveries({ delivered, failed, dead })));
    expect(bars(svg, 'delivered')).toHaveLength(2);
    expect(bars(svg, 'failed')).toHaveLength(1);
    expect(bars(svg, 'dead')).toHaveLength(1);
    // Stacked: the failed segment of 09:10 sits right on its delivered one (axis 0..10: 8 + 2 reach the top).
    const num = (tag: string, attr: string) => Number(new RegExp(`${attr}="([\\d.]+)"`).exec(tag)![1]);
    const [d10] = bars(svg, 'delivered');
    const [f10] = bars(svg, 'failed');
    expect(num(f10!, 'y') + num(f10!, 'height')).toBeCloseTo(num(d10!, 'y'), 1);
    expect(num(d10!, 'height') / num(f10!, 'height')).toBeCloseTo(4, 1);
    expect(svg).toContain('role="img"');
    expect(svg).toContain('aria-labelledby="deliveries-title deliveries-desc"');
    expect(svg).toContain('<title id="deliveries-title">Deliveries per minute</title>');
    expect(svg).toContain(
      '<desc id="deliveries-desc">Deliveries per minute, from 09:00 to 10:00 Brasília time, per minute: 11 delivered, 2 failed, 1 dead in all; the busiest at 09:10 with 10.</desc>',
    );
    expect(svg).toContain('<title>09:10 failed: 2</title>');
    // Ticks 0..10, the time labels of the hour and the legend.
    for (const tick of ['>0<', '>5<', '>10<']) expect(svg).toContain(tick);
    for (const label of ['09:00', '09:10', '09:50']) expect(svg).toContain(`>${label}</text>`);
    expect(svg).toContain('>horário de Brasília</text>');
    expect(svg).toMatch(/<g class="legend-dead">.*>dead<\/text>/);
    expect(svg).not.toContain('chart-empty');
    // Colours are presentation attributes: the CSP forbids style attributes.
    expect(svg).not.toMatch(/\sstyle=/);
    expect(svg).toContain('fill="#c62828"');
  });

  it('an all-zero window says so instead of drawing', () => {
    const svg = render(
      h(StackedBarChart, {
        ...deliveries({ delivered: zeros(), failed: zeros(), dead: zeros() }),
        emptyText: 'No deliveries',
      }),
    );
    expect(svg).toContain('class="chart-empty"');
    expect(svg).toContain('>No deliveries</text>');
    expect(svg).not.toContain('class="bar"');
    expect(svg).toContain('none in any bucket');
    const none = render(h(StackedBarChart, { ...deliveries({ delivered: [], failed: [], dead: [] }), starts: [] }));
    expect(none).toContain('>No data in this window</text>');
  });
});

describe('LineChart', () => {
  const latency = (p50: Array<number | null>, p99: Array<number | null>): TimeChartProps => ({
    id: 'latency',
    title: 'Delivery latency',
    starts: hour,
    bucketSeconds: 60,
    unit: 'ms',
    series: [
      { key: 'p50', label: 'p50', color: '#1565c0', values: p50 },
      { key: 'p99', label: 'p99', color: '#6a1b9a', values: p99 },
    ],
  });

  it('a polyline per run of values and a dot per value; no value breaks the line', () => {
    const p50 = new Array<number | null>(60).fill(null);
    const p99 = new Array<number | null>(60).fill(null);
    for (const i of [3, 4, 5, 20, 21]) {
      p50[i] = 40 + i;
      p99[i] = 300 + i;
    }
    const svg = render(h(LineChart, latency(p50, p99)));
    const group = (key: string) => new RegExp(`<g class="series series-${key}"[^>]*>(.*?)</g>`).exec(svg)![1]!;
    expect(group('p50').match(/<polyline /g)).toHaveLength(2);
    expect(group('p99').match(/<circle class="point"/g)).toHaveLength(5);
    expect(svg).toContain('<title>09:21 p99: 321 ms</title>');
    expect(svg).toContain('>400 ms</text>');
    expect(lineDescription(latency(p50, p99))).toBe(
      'Delivery latency, from 09:00 to 10:00 Brasília time, per minute. p50: highest 61 ms at 09:21; p99: highest 321 ms at 09:21.',
    );
    expect(svg).not.toMatch(/\sstyle=/);
  });

  it('no values at all: the empty state', () => {
    const svg = render(h(LineChart, latency(new Array(60).fill(null), new Array(60).fill(null))));
    expect(svg).toContain('class="chart-empty"');
    expect(svg).not.toContain('<polyline');
    expect(svg).toContain('p50: no values');
  });
});

it('text given to a chart is escaped, never markup', () => {
  const hostile = '<img src=x onerror=alert(1)>';
  const svg = render(
    h(StackedBarChart, {
      ...deliveries({ delivered: [1], failed: [0], dead: [0] }),
      title: hostile,
      starts: [hour[0]!],
      series: [{ key: 'x', label: hostile, color: '#000', values: [1] }],
    }),
  );
  expect(svg).not.toContain('<img');
  expect(svg).toContain('&lt;img src=x onerror=alert(1)>');
});

it('a day of 15-minute buckets: labels every 3 hours and the span of the day', () => {
  const from = Date.parse('2026-11-25T12:15:00.000Z');
  const day = Array.from({ length: 96 }, (_, i) => new Date(from + i * 900_000).toISOString());
  const props: TimeChartProps = {
    id: 'registrations-day',
    title: 'Registrations',
    starts: day,
    bucketSeconds: 900,
    series: [{ key: 'registered', label: 'registered', color: '#2e7d32', values: day.map((_, i) => i % 2) }],
  };
  const svg = render(h(StackedBarChart, props));
  expect(svg).toContain('data-buckets="96"');
  expect(svg.match(/<rect class="bar"/g)).toHaveLength(48);
  expect(svg.match(/>\d\d:00<\/text>/g)).toHaveLength(8);
  expect(barDescription(props)).toContain(
    'from 2026-11-25 09:15 to 2026-11-26 09:15 Brasília time, per 15 minutes: 48 registered in all',
  );
});
