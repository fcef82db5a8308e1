/**
 * The arithmetic of the console's charts, apart from their markup so it is tested on its own: value
 * ticks, time labels and the plot's geometry. No chart library: a polyline and some rectangles are all
 * these charts draw, and a library would want a DOM (or a bundle) the server-rendered console has not.
 */
import { brasiliaLocalValue } from '../locale';

/** Where the plot sits inside the chart's viewBox (title above, time labels and legend below). */
export interface PlotArea {
  width: number;
  height: number;
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export const CHART_WIDTH = 720;
export const CHART_HEIGHT = 280;

export const PLOT: PlotArea = {
  width: CHART_WIDTH,
  height: CHART_HEIGHT,
  left: 64,
  top: 36,
  right: CHART_WIDTH - 16,
  bottom: CHART_HEIGHT - 64,
};

/**
 * Round ticks from 0 up to at least `max`: steps of 1, 2 or 5 times a power of ten, about `count` of
 * them. Integer steps only (the charts count events and whole milliseconds). `max` of 0 or less
 * still gives an axis, 0 to 1.
 */
export function valueTicks(max: number, count = 4): number[] {
  if (!Number.isFinite(max) || max <= 0) return [0, 1];
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power);
  const top = Math.ceil(max / step) * step;
  const ticks: number[] = [];
  for (let v = 0; v <= top + step / 2; v += step) ticks.push(Math.round(v));
  return ticks;
}

/** A value as a tick shows it: 1234 as "1.2k", 1500000 as "1.5M", with the unit after when given. */
export function formatValue(value: number, unit?: string): string {
  const abs = Math.abs(value);
  const text =
    abs >= 1_000_000
      ? `${trim(value / 1_000_000)}M`
      : abs >= 10_000
        ? `${trim(value / 1_000)}k`
        : String(Math.round(value));
  return unit ? `${text} ${unit}` : text;
}

function trim(n: number): string {
  return n.toFixed(1).replace(/\.0$/, '');
}

export interface TimeLabel {
  /** The bucket the label sits under. */
  index: number;
  /** HH:MM in Brasília time. */
  text: string;
}

/**
 * Labels under the time axis: every 10 minutes for one-minute buckets (an hour: 6 or 7 labels),
 * every 3 hours for 15-minute buckets (a day: 8 labels), else about 6 spread evenly. A label sits
 * under the bucket starting on a round time, so labels do not jump as the window slides.
 */
export function timeLabels(starts: readonly string[], bucketSeconds: number): TimeLabel[] {
  const everySeconds = bucketSeconds <= 60 ? 600 : bucketSeconds <= 900 ? 10_800 : undefined;
  const labels: TimeLabel[] = [];
  starts.forEach((at, index) => {
    const ms = Date.parse(at);
    if (Number.isNaN(ms)) return;
    const round =
      everySeconds === undefined
        ? index % Math.max(1, Math.ceil(starts.length / 6)) === 0
        : Math.floor(ms / 1000) % everySeconds === 0;
    if (round) labels.push({ index, text: clock(ms) });
  });
  return labels;
}

/** HH:MM of an instant in Brasília time, as every time in the console (docs/console.md). */
export function clock(ms: number): string {
  return brasiliaLocalValue(ms).slice(11, 16);
}

/** Where bucket `index` of `count` is centred across the plot, and how wide its band is. */
export function band(index: number, count: number, plot: PlotArea = PLOT): { center: number; width: number } {
  const width = (plot.right - plot.left) / Math.max(1, count);
  return { center: plot.left + width * (index + 0.5), width };
}

/** The height on the plot of `value` on an axis going from 0 to `top`. */
export function yOf(value: number, top: number, plot: PlotArea = PLOT): number {
  const clamped = Math.min(Math.max(value, 0), top);
  return plot.bottom - (clamped / top) * (plot.bottom - plot.top);
}

/** A coordinate as the SVG gets it: at most two decimals, no trailing zeros. */
export function coord(n: number): string {
  return String(Math.round(n * 100) / 100);
}

/**
 * The runs of consecutive non-null values of a series, as polyline points: a bucket without a
 * value (no attempts, so no latency) breaks the line rather than drawing it down to zero.
 */
export function lineRuns(
  values: ReadonlyArray<number | null>,
  top: number,
  plot: PlotArea = PLOT,
): Array<Array<{ index: number; x: number; y: number; value: number }>> {
  const runs: Array<Array<{ index: number; x: number; y: number; value: number }>> = [];
  let current: Array<{ index: number; x: number; y: number; value: number }> = [];
  values.forEach((value, index) => {
    if (value === null || !Number.isFinite(value)) {
      if (current.length > 0) runs.push(current);
      current = [];
      return;
    }
    current.push({ index, x: band(index, values.length, plot).center, y: yOf(value, top, plot), value });
  });
  if (current.length > 0) runs.push(current);
  return runs;
}

/** The largest value of any series (nulls skipped), or of the stacked sums when `stacked`. */
export function maxOf(series: ReadonlyArray<ReadonlyArray<number | null>>, stacked = false): number {
  if (stacked) {
    const length = Math.max(0, ...series.map((s) => s.length));
    let max = 0;
    for (let i = 0; i < length; i++)
      max = Math.max(
        max,
        series.reduce((sum, s) => sum + (s[i] ?? 0), 0),
      );
    return max;
  }
  return Math.max(0, ...series.flatMap((s) => s.filter((v): v is number => v !== null && Number.isFinite(v))));
}
