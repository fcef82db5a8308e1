/** @jsxRuntime automatic @jsxImportSource preact */
import { ChartFrame, type TimeChartProps } from './chart-frame';
import { peak, spanText } from './describe';
import { clock, coord, formatValue, lineRuns, maxOf, valueTicks } from './scale';

/**
 * Several series over time as lines (e.g. p50 and p99 delivery latency). A bucket without a value
 * breaks its line; each value is also a dot with its own tooltip (<title>, no script needed).
 */
export function LineChart(props: TimeChartProps) {
  const ticks = valueTicks(maxOf(props.series.map((s) => s.values)));
  const top = ticks[ticks.length - 1]!;
  const empty = props.series.every((s) => s.values.every((v) => v === null || v === 0));
  return (
    <ChartFrame props={props} ticks={ticks} description={lineDescription(props)} empty={empty}>
      {props.series.map((series) => {
        const runs = lineRuns(series.values, top);
        return (
          <g key={series.key} class={`series series-${series.key}`} data-series={series.key}>
            {runs.map((run) => (
              <polyline
                key={run[0]!.index}
                points={run.map((p) => `${coord(p.x)},${coord(p.y)}`).join(' ')}
                fill="none"
                stroke={series.color}
                stroke-width="2"
                stroke-linejoin="round"
              />
            ))}
            {runs.flat().map((p) => (
              <circle key={p.index} class="point" cx={coord(p.x)} cy={coord(p.y)} r="2.5" fill={series.color}>
                <title>{`${clock(Date.parse(props.starts[p.index] ?? ''))} ${series.label}: ${formatValue(p.value, props.unit)}`}</title>
              </circle>
            ))}
          </g>
        );
      })}
    </ChartFrame>
  );
}

/** What a screen reader says instead of the picture: the span, then each series' highest value. */
export function lineDescription(props: TimeChartProps): string {
  const parts = props.series.map((series) => {
    const high = peak(series.values);
    if (high === undefined) return `${series.label}: no values`;
    const at = clock(Date.parse(props.starts[high.index] ?? ''));
    return `${series.label}: highest ${formatValue(high.value, props.unit)} at ${at}`;
  });
  return `${props.title}, ${spanText(props.starts, props.bucketSeconds)}. ${parts.join('; ')}.`;
}
