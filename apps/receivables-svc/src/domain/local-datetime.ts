/**
 * The spec's payment_date: ISO 8601 with fractional seconds and no zone. A zoneless time is read as
 * Brazilian civil time by the ERPs, so we write it in the service's time zone (America/Sao_Paulo by
 * default) rather than UTC.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

export function formatLocalDateTime(instant: Date, timeZone: string): string {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(instant).map((p) => [p.type, p.value]));
  const ms = String(instant.getUTCMilliseconds()).padStart(3, '0');
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}.${ms}`;
}
