/** @jsxRuntime automatic @jsxImportSource preact */
import { ChartFrame, type TimeChartProps } from './chart-frame';
import { peak, spanText } from './describe';
import { band, clock, coord, formatValue, maxOf, valueTicks, yOf } from './scale';

/**
 * Counts over time as stacked bars, the first series at the bottom (e.g. deliveries per minute:
 * delivered, failed, dead). A zero draws no rectangle; each bar segment has its own tooltip.
 */
export function StackedBarChart(props: TimeChartProps) {
  const ticks = valueTicks(
    maxOf(
      props.series.map((s) => s.values),
      true,
    ),
  );
  const top = ticks[ticks.length - 1]!;
  const empty = props.series.every((s) => s.values.every((v) => v === null || v === 0));
  const count = props.starts.length;
  const below = new Array<number>(count).fill(0);
  return (
    <ChartFrame props={props} ticks={ticks} description={barDescription(props)} empty={empty}>
      {props.series.map((series) => (
        <g key={series.key} class={`series series-${series.key}`} data-series={series.key}>
          {series.values.slice(0, count).map((value, index) => {
            const base = below[index]!;
            if (value === null || value <= 0) return null;
            below[index] = base + value;
            const { center, width } = band(index, count);
            const barWidth = Math.max(1, width * 0.8);
            const y0 = yOf(base, top);
            const y1 = yOf(base + value, top);
            return (
              <rect
                key={index}
                class="bar"
                x={coord(center - barWidth / 2)}
                y={coord(y1)}
                width={coord(barWidth)}
                height={coord(Math.max(0.5, y0 - y1))}
                fill={series.color}
              >
                <title>{`${clock(Date.parse(props.starts[index] ?? ''))} ${series.label}: ${formatValue(value, props.unit)}`}</title>
              </rect>
            );
          })}
        </g>
      ))}
    </ChartFrame>
  );
}

/** What a screen reader says instead of the picture: the totals of each series and the busiest bucket. */
export function barDescription(props: TimeChartProps): string {
  const totals = props.series.map(
    (s) => `${formatValue(s.values.reduce<number>((sum, v) => sum + (v ?? 0), 0))} ${s.label}`,
  );
  const sums = props.starts.map((_, i) => props.series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const busiest = peak(sums);
  const busiestText =
    busiest === undefined
      ? 'none in any bucket'
      : `the busiest at ${clock(Date.parse(props.starts[busiest.index] ?? ''))} with ${formatValue(busiest.value, props.unit)}`;
  return `${props.title}, ${spanText(props.starts, props.bucketSeconds)}: ${totals.join(', ')} in all; ${busiestText}.`;
}
