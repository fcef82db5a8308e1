/** Calendar dates as the bank speaks them: "YYYY-MM-DD", no time of day, no time zone. */

const DAY_MS = 86_400_000;

/** Whether the text is a real calendar date in YYYY-MM-DD form (2025-02-30 is not). */
export function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** Days since 1970-01-01 of a calendar date, so that date arithmetic never meets a time zone. */
export function epochDay(text: string): number {
  if (!isCalendarDate(text)) throw new RangeError(`not a calendar date YYYY-MM-DD: "${text}"`);
  return Date.UTC(Number(text.slice(0, 4)), Number(text.slice(5, 7)) - 1, Number(text.slice(8, 10))) / DAY_MS;
}

/** Today's date in UTC as YYYY-MM-DD. */
export function calendarDateOf(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}
