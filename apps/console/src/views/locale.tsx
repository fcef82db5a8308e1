/** @jsxRuntime automatic @jsxImportSource preact */
import type Router from '@koa/router';
import type Koa from 'koa';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { readCookie, setCookie } from '../http/cookies';
import { MESSAGES, type MessageKey } from './messages';

/**
 * The console's language and how it writes money, dates and times: the one module every page uses.
 * Its users are Brazilian ERP support staff, so pt-BR is the default and English is on request
 * (docs/console.md). Money is `R$ 1.234,56` and every date and time is Brasília time,
 * `dd/mm/aaaa hh:mm (horário de Brasília)`, whatever zone the console's host runs in.
 */

export type Locale = 'pt-BR' | 'en';
export const DEFAULT_LOCALE: Locale = 'pt-BR';
export const LOCALES: readonly Locale[] = ['pt-BR', 'en'];
export const LANG_COOKIE = 'lang';
export const LANG_PATH = '/lang';
/** The zone the charges live in: payment_date is its civil time, and what the staff read. */
export const BRAZIL_TIME_ZONE = 'America/Sao_Paulo';

export function isLocale(value: string | undefined): value is Locale {
  return value === 'pt-BR' || value === 'en';
}

/** Chosen by the `lang` cookie ('pt-BR' | 'en'), set by GET /lang?to=en&back=/path (a link in the layout). */
export function localeOf(ctx: Koa.Context): Locale {
  const chosen = readCookie(ctx, LANG_COOKIE);
  return isLocale(chosen) ? chosen : DEFAULT_LOCALE;
}

export interface Formats {
  locale: Locale;
  /** The catalog's text for the key, with each `{name}` replaced by vars[name]. */
  t(key: MessageKey, vars?: Record<string, string | number>): string;
  /** 'R$ 1.234,56' (pt-BR), 'R$1,234.56' (en). */
  money(reais: number): string;
  /** An instant: '28/11/2026 14:05 (horário de Brasília)'; en: '11/28/2026 2:05 PM (Brasília time)'. A dash for none. */
  dateTime(iso: string | null | undefined): string;
  /** '28/11/2026' for a civil date 'YYYY-MM-DD' (no time zone shift); en '11/28/2026'. */
  date(isoDate: string | null | undefined): string;
  /** A São Paulo civil date-time WITHOUT zone (e.g. payment_date) shown as Brasília time, no shift. */
  civilDateTime(localIso: string | null | undefined): string;
  /** A share 0..1 as a percentage with one decimal, rounded down ('99,5%'; en '99.5%'), a dash for none. */
  percent(rate: number | null | undefined): string;
  /** Milliseconds as '850 ms' or '1,2 s' (en '1.2 s'), a dash for none. */
  duration(ms: number | null | undefined): string;
  /** A wait in whole seconds as '45 s', '12 min', '3 h 05 min' or '2 d 4 h'. */
  age(seconds: number): string;
}

/** The wall-clock reading of a moment: what a clock in Brasília shows, or what payment_date says. */
interface CivilTime {
  year: string;
  month: string;
  day: string;
  /** 0..23 */
  hour: number;
  minute: string;
}

const DASH = '—';

/** Built once per locale: Intl formatters are costly to create and safe to share. */
const BY_LOCALE = new Map<Locale, Formats>();

export function formatsFor(locale: Locale): Formats {
  let formats = BY_LOCALE.get(locale);
  if (!formats) {
    formats = buildFormats(locale);
    BY_LOCALE.set(locale, formats);
  }
  return formats;
}

export const LocaleContext = createContext<Formats>(formatsFor(DEFAULT_LOCALE));

/** The request's Formats inside a component (render() provides them from the `lang` cookie). */
export function useFormats(): Formats {
  return useContext(LocaleContext);
}

function buildFormats(locale: Locale): Formats {
  const catalog = MESSAGES[locale];
  const money = new Intl.NumberFormat(locale === 'pt-BR' ? 'pt-BR' : 'en-US', { style: 'currency', currency: 'BRL' });
  const oneDecimal = new Intl.NumberFormat(locale === 'pt-BR' ? 'pt-BR' : 'en-US', {
    minimumFractionDigits: 1,
    maximumFractionDigits: 1,
  });
  const civil = (c: CivilTime) => writeCivil(locale, c);
  return {
    locale,
    t: (key, vars) => substitute(catalog[key], vars),
    // ICU puts a no-break space after R$ in pt-BR; the binding form (and what staff type into a
    // search or a ticket) is a plain space.
    money: (reais) => money.format(reais).replace(/\u00a0/g, ' '),
    dateTime: (iso) => {
      if (!iso) return DASH;
      const ms = Date.parse(iso);
      return Number.isNaN(ms) ? iso : civil(brasiliaClock(ms));
    },
    date: (isoDate) => {
      if (!isoDate) return DASH;
      const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(isoDate);
      if (!m) return isoDate;
      const [, year, month, day] = m;
      return locale === 'pt-BR' ? `${day}/${month}/${year}` : `${month}/${day}/${year}`;
    },
    civilDateTime: (localIso) => {
      if (!localIso) return DASH;
      // With a zone it is an instant after all: shift it into Brasília time like any other.
      if (/(Z|[+-]\d{2}:?\d{2})$/i.test(localIso)) return formatsFor(locale).dateTime(localIso);
      const parsed = parseCivil(localIso);
      return parsed ? civil(parsed) : localIso;
    },
    percent: (rate) =>
      rate === null || rate === undefined || !Number.isFinite(rate)
        ? DASH
        : `${oneDecimal.format(Math.floor(rate * 1000) / 10)}%`,
    duration: (ms) =>
      ms === null || ms === undefined ? DASH : ms < 1000 ? `${ms} ms` : `${oneDecimal.format(ms / 1000)} s`,
    age,
  };
}

function substitute(text: string, vars: Record<string, string | number> | undefined): string {
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

/** Both languages are written from the clock reading by hand, so no ICU version changes the text. */
function writeCivil(locale: Locale, c: CivilTime): string {
  if (locale === 'pt-BR') return `${c.day}/${c.month}/${c.year} ${pad(c.hour)}:${c.minute} (horário de Brasília)`;
  const hour12 = c.hour % 12 === 0 ? 12 : c.hour % 12;
  return `${c.month}/${c.day}/${c.year} ${hour12}:${c.minute} ${c.hour < 12 ? 'AM' : 'PM'} (Brasília time)`;
}

const CLOCK = new Intl.DateTimeFormat('en-US', {
  timeZone: BRAZIL_TIME_ZONE,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/** What a clock in Brasília read at the instant ms. */
function brasiliaClock(ms: number): CivilTime & { second: number } {
  const parts: Record<string, string> = {};
  for (const p of CLOCK.formatToParts(new Date(ms))) parts[p.type] = p.value;
  return {
    year: parts.year ?? '',
    month: parts.month ?? '',
    day: parts.day ?? '',
    hour: Number(parts.hour) % 24,
    minute: parts.minute ?? '',
    second: Number(parts.second),
  };
}

function parseCivil(text: string): CivilTime | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(:\d{2}(\.\d+)?)?$/.exec(text);
  if (!m) return undefined;
  const [, year = '', month = '', day = '', hour = '', minute = ''] = m;
  return { year, month, day, hour: Number(hour), minute };
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

function age(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${pad(minutes % 60)} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/* Form values: the staff type and read Brasília time, the API speaks UTC instants. */

/** YYYY-MM-DD of the Brasília calendar day `days` from `now`. */
export function isoDay(now: number, days = 0): string {
  const c = brasiliaClock(now + days * 86_400_000);
  return `${c.year}-${c.month}-${c.day}`;
}

/**
 * A `datetime-local` field's value (`2026-11-26T09:30`, no zone: the page labels it Brasília time)
 * as an ISO 8601 instant; undefined when it is no such value.
 */
export function brasiliaInstant(local: string | undefined): string | undefined {
  if (!local || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(local)) return undefined;
  const asUtc = Date.parse(`${local.length === 16 ? `${local}:00` : local}Z`);
  if (Number.isNaN(asUtc)) return undefined;
  // The wall-clock reading taken as UTC is off by the zone's offset at that moment; twice settles
  // it even across an offset change (Brazil has had none since 2019, but the zone database decides).
  let ms = asUtc - offsetAt(asUtc);
  ms = asUtc - offsetAt(ms);
  return new Date(ms).toISOString();
}

/** An instant as a `datetime-local` value in Brasília time (minutes). */
export function brasiliaLocalValue(ms: number): string {
  const c = brasiliaClock(ms);
  return `${c.year}-${c.month}-${c.day}T${pad(c.hour)}:${c.minute}`;
}

/** Brasília's offset from UTC at the instant ms, in milliseconds (negative: behind UTC). */
function offsetAt(ms: number): number {
  const c = brasiliaClock(ms);
  const wall = Date.UTC(Number(c.year), Number(c.month) - 1, Number(c.day), c.hour, Number(c.minute), c.second);
  return wall - Math.floor(ms / 1000) * 1000;
}

/* The language switch. */

/** Only a console path may be returned to (no open redirect). */
function safeBack(back: string | undefined): string {
  if (!back || !back.startsWith('/') || back.startsWith('//') || /[\s\\]/.test(back)) return '/';
  return back;
}

/**
 * GET /lang?to=en&back=/path: remembers the language for a year in the `lang` cookie and returns to
 * the page. No session is needed (the sign-in page has the switch too).
 */
export function mountLangRoute<S>(router: Router<S>, options: { secureCookies: boolean }): void {
  router.get(LANG_PATH, (ctx) => {
    const to = typeof ctx.query.to === 'string' ? ctx.query.to : undefined;
    const back = typeof ctx.query.back === 'string' ? ctx.query.back : undefined;
    if (isLocale(to))
      setCookie(ctx, LANG_COOKIE, to, { secure: options.secureCookies, maxAgeSeconds: 365 * 24 * 3600 });
    ctx.redirect(safeBack(back));
  });
}

/** The href of the layout's link to the other language, back to the current page. */
export function langSwitchHref(to: Locale, back: string): string {
  return `${LANG_PATH}?${new URLSearchParams({ to, back }).toString()}`;
}
