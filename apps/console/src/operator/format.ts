/** An ISO 8601 instant as the operator pages show it: `2026-11-26 09:00:12 UTC` (or a dash for none). */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A share 0..1 as a percentage with one decimal (`99.5%`), or a dash when there is none. */
export function percent(rate: number | null | undefined): string {
  if (rate === null || rate === undefined || !Number.isFinite(rate)) return '—';
  return `${(Math.floor(rate * 1000) / 10).toFixed(1)}%`;
}

/** A wait in whole seconds as `45 s`, `12 min`, `3 h 05 min` or `2 d 4 h`. */
export function age(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${String(minutes % 60).padStart(2, '0')} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** Milliseconds as `850 ms` or `1.2 s`, a dash for none. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
