import { brasiliaLocalValue } from '../locale';
import { clock } from './scale';

/** "from 09:00 to 10:00 Brasília time, per minute": the span a chart covers, for its <desc>. */
export function spanText(starts: readonly string[], bucketSeconds: number): string {
  const first = Date.parse(starts[0] ?? '');
  const last = Date.parse(starts[starts.length - 1] ?? '');
  const per =
    bucketSeconds === 60 ? 'minute' : bucketSeconds % 60 === 0 ? `${bucketSeconds / 60} minutes` : `${bucketSeconds} s`;
  if (Number.isNaN(first) || Number.isNaN(last)) return `per ${per}`;
  const end = last + bucketSeconds * 1000;
  // A span across midnight (in Brasília) names the days too.
  const day = (ms: number) => brasiliaLocalValue(ms).slice(0, 10);
  const sameDay = day(first) === day(end - 1);
  const at = (ms: number) => (sameDay ? clock(ms) : `${day(ms)} ${clock(ms)}`);
  return `from ${at(first)} to ${at(end)} Brasília time, per ${per}`;
}

/** The bucket holding the largest value (the first one on a tie), or undefined when all are empty. */
export function peak(values: ReadonlyArray<number | null>): { index: number; value: number } | undefined {
  let best: { index: number; value: number } | undefined;
  values.forEach((value, index) => {
    if (value !== null && value > 0 && (best === undefined || value > best.value)) best = { index, value };
  });
  return best;
}
