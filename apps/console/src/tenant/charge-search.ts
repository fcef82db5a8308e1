import { Readable } from 'node:stream';
import type { components } from '@payments/sdk';
import { bearer, ok, type PublicApi } from '../gateway/public-api';
import type { ConsoleContext } from '../http/context';
import { BadInputError } from '../http/errors';
import { single } from '../http/form';
import { formatsFor, isoDay, localeOf, type Formats } from '../views/locale';
import { CHARGE_STATES, type ChargeFilters, type ChargeState } from './pages/charges';
import { paymentTypeText } from './pages/parts';

/*
 * The charges search of the console (docs/console.md, "Pages"): its filters read from the query
 * string, the API's search body they make, and the CSV export of every charge they select.
 */

type SearchRequest = components['schemas']['SearchRequest'];
export type SearchResultItem = components['schemas']['SearchResultItem'];

/** The search's default span of emission dates: the last 30 days, today included. */
const DEFAULT_SPAN_DAYS = 30;
/** Rows per API page while exporting: the API's default page (a search costs 1 rate token per 100 rows). */
const CSV_PAGE_SIZE = 500;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The filters of the query string (as typed: the same text goes back into the form and the links); a bad one is named (400). */
export function chargeFilters(ctx: ConsoleContext): ChargeFilters {
  const { t } = formatsFor(localeOf(ctx));
  const now = Date.now();
  const state = (single(ctx.query.state) ?? 'all') as ChargeState;
  if (!CHARGE_STATES.includes(state))
    throw new BadInputError('state', t('charges.badState', { states: CHARGE_STATES.join(', ') }));
  const from = single(ctx.query.from) || isoDay(now, -(DEFAULT_SPAN_DAYS - 1));
  const to = single(ctx.query.to) || isoDay(now);
  if (!DAY.test(from) || Number.isNaN(Date.parse(from))) throw new BadInputError('from', t('charges.badDate'));
  if (!DAY.test(to) || Number.isNaN(Date.parse(to))) throw new BadInputError('to', t('charges.badDate'));
  if (to < from) throw new BadInputError('to', t('charges.badRange'));
  const filters: ChargeFilters = { state, from, to };
  for (const name of ['payer_name', 'payer_tax_id', 'our_number', 'value'] as const) {
    const typed = single(ctx.query[name])?.trim();
    if (typed) filters[name] = typed;
  }
  if (filters.value !== undefined && parseReais(filters.value) === undefined)
    throw new BadInputError('value', t('charges.badValue'));
  return filters;
}

/**
 * An amount as staff type it, in reais: `1.234,56`, `1234,56` or `1234.56` (a dot followed by one or
 * two digits is a decimal point; by three, a thousands separator). Undefined when it is none of these.
 */
export function parseReais(text: string): number | undefined {
  const bare = text.replace(/^R\$\s*/i, '').trim();
  if (/^\d{1,3}(\.\d{3})+(,\d{1,2})?$/.test(bare) || /^\d+(,\d{1,2})?$/.test(bare))
    return Number(bare.replace(/\./g, '').replace(',', '.'));
  if (/^\d+\.\d{1,2}$/.test(bare)) return Number(bare);
  return undefined;
}

/** The API's search body for the filters: only the filters given (the gateway judges them: a 422 names the field). */
export function searchBody(filters: ChargeFilters, limit: number, cursor?: string): SearchRequest {
  const body: SearchRequest = { state: filters.state, start_date: filters.from, end_date: filters.to, limit };
  if (cursor) body.cursor = cursor;
  if (filters.payer_name) body.payer_name = filters.payer_name;
  if (filters.payer_tax_id) body.payer_tax_id = filters.payer_tax_id;
  if (filters.our_number) body.our_number = filters.our_number;
  const value = filters.value === undefined ? undefined : parseReais(filters.value);
  if (value !== undefined) body.value = value;
  return body;
}

export interface ChargesPage {
  items: SearchResultItem[];
  next: string | undefined;
}

/** One page of the tenant's search, with its JWT. */
export async function searchCharges(
  api: PublicApi,
  jwt: string,
  filters: ChargeFilters,
  limit: number,
  cursor?: string,
): Promise<ChargesPage> {
  const result = await api.POST('/api/v1/accounts-receivable/search', {
    headers: bearer(jwt),
    body: searchBody(filters, limit, cursor),
  });
  const items = ok('POST /api/v1/accounts-receivable/search', result);
  return { items, next: result.response.headers.get('x-next-cursor') || undefined };
}

/**
 * GET /tenant/charges.csv: every charge the filters select, paged through the API's cursor and
 * streamed as it arrives, in pt-BR as Brazilian Excel opens it (UTF-8 with a BOM, `;` between
 * fields, amounts `1234,56`, dates `dd/mm/aaaa`). The first page is asked before anything is sent, so
 * a refusal is the usual error page; a failure after that cuts the download short (the browser says
 * it failed) rather than leave a file that looks whole.
 */
export async function exportChargesCsv(
  ctx: ConsoleContext,
  filters: ChargeFilters,
  fetchPage: (cursor: string | undefined, limit: number) => Promise<ChargesPage>,
  onError: (err: unknown) => void,
): Promise<void> {
  const first = await fetchPage(undefined, CSV_PAGE_SIZE);
  ctx.type = 'text/csv; charset=utf-8';
  ctx.set('content-disposition', `attachment; filename="cobrancas-${filters.from}-a-${filters.to}.csv"`);
  ctx.set('cache-control', 'private, no-store');
  const lines = csvLines(first, (cursor) => fetchPage(cursor, CSV_PAGE_SIZE), formatsFor('pt-BR'));
  ctx.body = Readable.from(cutShortOnError(lines, ctx, onError));
}

/** The lines, until one fails: then the connection is dropped before the stream could end it as whole. */
async function* cutShortOnError(
  lines: AsyncGenerator<string>,
  ctx: ConsoleContext,
  onError: (err: unknown) => void,
): AsyncGenerator<string> {
  try {
    yield* lines;
  } catch (err) {
    onError(err);
    ctx.res.destroy();
  }
}

const BOM = '\ufeff';
const CRLF = '\r\n';

async function* csvLines(
  first: ChargesPage,
  fetchPage: (cursor: string) => Promise<ChargesPage>,
  f: Formats,
): AsyncGenerator<string> {
  const header = [
    f.t('charges.col.charge'),
    f.t('charges.col.payer'),
    f.t('charges.col.state'),
    f.t('charges.col.paidWith'),
    f.t('charges.csv.paidOn'),
    f.t('charges.col.amountDue'),
    f.t('charges.col.amountPaid'),
    f.t('charges.col.fee'),
  ];
  yield BOM + csvRow(header);
  let page = first;
  for (;;) {
    if (page.items.length > 0) yield page.items.map((c) => csvRow(csvFields(c, f))).join('');
    if (!page.next) return;
    page = await fetchPage(page.next);
  }
}

function csvFields(c: SearchResultItem, f: Formats): string[] {
  return [
    c.accounts_receivable_id,
    c.client_name,
    c.status_payment,
    paymentTypeText(f.t, c.paymento_type),
    civilDateTimeCell(c.payment_date),
    decimalComma(c.amount_due),
    decimalComma(c.amount_paid),
    decimalComma(c.fee_amount),
  ];
}

/** A row: fields separated by `;`, each quoted when it holds `;`, a quote or a line break; CRLF ended (RFC 4180). */
function csvRow(fields: readonly string[]): string {
  return fields.map(csvField).join(';') + CRLF;
}

function csvField(value: string): string {
  // A cell Excel would run as a formula (a payer name starting "=", "+", "-" or "@") is kept as text.
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[;"\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** An amount in reais as `1234,56`: no thousands separator, no currency sign, as Excel reads a number. */
export function decimalComma(reais: number): string {
  const cents = Math.round(reais * 100);
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)},${String(abs % 100).padStart(2, '0')}`;
}

/**
 * payment_date, a São Paulo civil date-time without a zone, as `dd/mm/aaaa hh:mm`: read as written,
 * never shifted (the header says it is Brasília time). Empty when unpaid.
 */
function civilDateTimeCell(local: string | null): string {
  if (!local) return '';
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})/.exec(local);
  return m ? `${m[3]}/${m[2]}/${m[1]} ${m[4]}:${m[5]}` : local;
}
