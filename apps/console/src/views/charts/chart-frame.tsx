/** @jsxRuntime automatic @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { useFormats } from '../locale';
import { CHART_HEIGHT, CHART_WIDTH, coord, formatValue, PLOT, timeLabels, yOf } from './scale';

/** One series of a time chart: its values bucket by bucket (null: none in that bucket). */
export interface ChartSeries {
  /** A short name for classes and ids, e.g. `delivered`, `p99`. */
  key: string;
  /** As the legend says it. */
  label: string;
  /** Drawn with the SVG presentation attributes fill/stroke (the CSP forbids style attributes). */
  color: string;
  values: ReadonlyArray<number | null>;
}

export interface TimeChartProps {
  /** Unique on the page: the <title> and <desc> ids derive from it. */
  id: string;
  title: string;
  /** Start of each bucket (ISO 8601), oldest first. */
  starts: readonly string[];
  bucketSeconds: number;
  series: readonly ChartSeries[];
  /** After each tick value, e.g. `ms`. */
  unit?: string;
  /** Shown instead of the plot when no bucket holds a value other than 0. */
  emptyText?: string;
}

interface FrameProps {
  props: TimeChartProps;
  ticks: number[];
  description: string;
  empty: boolean;
  /** The marks (polylines, bars) drawn over the grid. */
  children: ComponentChildren;
}

/**
 * What every time chart has around its marks: an accessible name and description, the visible
 * title, the value grid and ticks, the time labels (Brasília time) and the legend.
 */
export function ChartFrame({ props, ticks, description, empty, children }: FrameProps) {
  const { t } = useFormats();
  const top = ticks[ticks.length - 1]!;
  const titleId = `${props.id}-title`;
  const descId = `${props.id}-desc`;
  const labels = timeLabels(props.starts, props.bucketSeconds);
  const step = (PLOT.right - PLOT.left) / Math.max(1, props.starts.length);
  return (
    <svg
      xmlns="http://www.w3.org/2000/svg"
      class="chart"
      id={props.id}
      role="img"
      aria-labelledby={`${titleId} ${descId}`}
      width={CHART_WIDTH}
      height={CHART_HEIGHT}
      viewBox={`0 0 ${CHART_WIDTH} ${CHART_HEIGHT}`}
      data-buckets={props.starts.length}
    >
      <title id={titleId}>{props.title}</title>
      <desc id={descId}>{description}</desc>
      <text class="chart-title" x={PLOT.left} y={20} font-size="15" font-weight="600" fill="currentColor">
        {props.title}
      </text>
      <g class="chart-grid" aria-hidden="true">
        {ticks.map((tick) => (
          <g key={tick}>
            <line
              x1={PLOT.left}
              x2={PLOT.right}
              y1={coord(yOf(tick, top))}
              y2={coord(yOf(tick, top))}
              stroke="#d0d4da"
              stroke-width="1"
            />
            <text x={PLOT.left - 6} y={coord(yOf(tick, top) + 4)} text-anchor="end" font-size="11" fill="currentColor">
              {formatValue(tick, props.unit)}
            </text>
          </g>
        ))}
      </g>
      <g class="chart-time" aria-hidden="true">
        {labels.map((label) => {
          const x = coord(PLOT.left + step * label.index);
          return (
            <g key={label.index}>
              <line x1={x} x2={x} y1={PLOT.bottom} y2={PLOT.bottom + 4} stroke="#8a9099" stroke-width="1" />
              <text x={x} y={PLOT.bottom + 16} text-anchor="middle" font-size="11" fill="currentColor">
                {label.text}
              </text>
            </g>
          );
        })}
        <text x={PLOT.right} y={PLOT.bottom + 30} text-anchor="end" font-size="10" fill="#5f6670">
          {t('charts.timeZone')}
        </text>
      </g>
      {empty ? (
        <text
          class="chart-empty"
          x={coord((PLOT.left + PLOT.right) / 2)}
          y={coord((PLOT.top + PLOT.bottom) / 2)}
          text-anchor="middle"
          font-size="13"
          fill="#5f6670"
        >
          {props.emptyText ?? 'No data in this window'}
        </text>
      ) : (
        <g class="chart-marks">{children}</g>
      )}
      <line x1={PLOT.left} x2={PLOT.right} y1={PLOT.bottom} y2={PLOT.bottom} stroke="#8a9099" stroke-width="1" />
      <g class="chart-legend">
        {props.series.map((series, i) => {
          const x = PLOT.left + i * 150;
          const y = CHART_HEIGHT - 14;
          return (
            <g key={series.key} class={`legend-${series.key}`}>
              <rect x={x} y={y - 9} width="10" height="10" fill={series.color} />
              <text x={x + 15} y={y} font-size="12" fill="currentColor">
                {series.label}
              </text>
            </g>
          );
        })}
      </g>
    </svg>
  );
}
