/** How the tenant pages write values. */

/** An ISO 8601 instant as `2026-11-26 09:00:12 UTC`, a dash for none. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

const BRL = new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' });

/** An amount in reais, as the payer reads it: `R$ 150,75`. */
export function money(value: number): string {
  return BRL.format(value);
}

/** Milliseconds as `850 ms` or `1.2 s`. */
export function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** YYYY-MM-DD of a day `days` from `now` (UTC). */
export function isoDay(now: number, days = 0): string {
  return new Date(now + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * A `datetime-local` field's value (`2026-11-26T09:30`, no zone: the page labels it UTC) as an ISO
 * 8601 instant; undefined when it is no such value.
 */
export function utcInstant(local: string | undefined): string | undefined {
  if (!local || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(local)) return undefined;
  const iso = `${local.length === 16 ? `${local}:00` : local}Z`;
  return Number.isNaN(Date.parse(iso)) ? undefined : new Date(iso).toISOString();
}

/** An instant as a `datetime-local` value in UTC (minutes). */
export function localValue(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16);
}
