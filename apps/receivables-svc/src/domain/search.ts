import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import {
  type ConsultResult,
  isUuid,
  PaymentTypeLabels,
  type ReceivablesSearchQuery,
  type SearchResultItem,
  ServiceError,
  StateLabels,
} from '@payments/contracts';
import type { ReceivableRow, ReceivablesDatabase } from '../db/schema';
import { PAYER_TAX_ID_SQL } from '../db/migrations';
import { formatLocalDateTime } from './local-datetime';
import { fromCents, toCents } from '@payments/br-format';
import { taxIdDigits } from '@payments/tax-id';

type SummaryRow = Pick<
  ReceivableRow,
  | 'account_receivable_id'
  | 'account_receivable_id_as_sent'
  | 'client_name'
  | 'state'
  | 'payment_type'
  | 'payment_date'
  | 'amount_cents'
  | 'amount_paid_cents'
  | 'fee_cents'
  | 'emission_date'
>;
const SUMMARY_COLUMNS = [
  'account_receivable_id',
  'account_receivable_id_as_sent',
  'client_name',
  'state',
  'payment_type',
  'payment_date',
  'amount_cents',
  'amount_paid_cents',
  'fee_cents',
  'emission_date',
] as const;

export interface SearchPage {
  items: SearchResultItem[];
  nextCursor: string | null;
}

/**
 * Receivables of a tenant by state and emission-date range (inclusive), and by the optional payer
 * name, payer tax id, our_number and amount, ordered by emission date then id, one page at a time
 * (keyset paging: fast at any depth, on the (tenant, [state | tax id | amount,] emission_date, id)
 * indexes; a name through its trigram index, an our_number through its own).
 */
export async function searchReceivables(
  db: Kysely<ReceivablesDatabase>,
  tenantId: string,
  query: ReceivablesSearchQuery,
  limit: number,
  cursor: string | undefined,
  timeZone: string,
): Promise<SearchPage> {
  const rows = await searchStatement(db, tenantId, query, limit, cursor).execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map((r) => {
      const s = summary(r, timeZone);
      return { ...s.common, paymento_type: s.paymentType };
    }),
    nextCursor: rows.length > limit && last ? encodeCursor(last) : null,
  };
}

type SearchQueryBuilder = SelectQueryBuilder<ReceivablesDatabase, 'receivables', SummaryRow>;

/** The statement of one page (limit + 1 rows, to know whether another follows); tests read its plan. */
export function searchStatement(
  db: Kysely<ReceivablesDatabase>,
  tenantId: string,
  query: ReceivablesSearchQuery,
  limit: number,
  cursor: string | undefined,
): SearchQueryBuilder {
  let q = db
    .selectFrom('receivables')
    .select(SUMMARY_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('emission_date', '>=', query.start_date)
    .where('emission_date', '<=', query.end_date);
  if (query.state !== 'all') q = q.where('state', '=', query.state);
  q = withOptionalFilters(q, query);
  if (cursor !== undefined) {
    const after = decodeCursor(cursor);
    q = q.where((eb) =>
      eb(eb.refTuple('emission_date', 'account_receivable_id'), '>', eb.tuple(after.emissionDate, after.id)),
    );
  }
  return q
    .orderBy('emission_date')
    .orderBy('account_receivable_id')
    .limit(limit + 1);
}

/** The optional filters, ANDed; each compares what its index holds (db/migrations/search-filter-indexes.ts). */
function withOptionalFilters(q: SearchQueryBuilder, query: ReceivablesSearchQuery): SearchQueryBuilder {
  let filtered = q;
  if (query.payer_name !== undefined) {
    const pattern = `%${escapeLike(query.payer_name)}%`;
    // Both sides folded by the same function: case and accents do not matter, whichever side has them.
    filtered = filtered.where(sql<string>`search_fold(client_name)`, 'like', sql<string>`search_fold(${pattern})`);
  }
  if (query.payer_tax_id !== undefined)
    filtered = filtered.where(sql.raw<string>(PAYER_TAX_ID_SQL), '=', taxIdDigits(query.payer_tax_id));
  if (query.our_number !== undefined) filtered = filtered.where('our_number', '=', query.our_number);
  if (query.value !== undefined) filtered = filtered.where('amount_cents', '=', toCents(query.value));
  return filtered;
}

/** The text as a LIKE pattern matching itself: its wildcards and the escape character escaped. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** One receivable by the ERP's id, in any spelling; it is answered as spelled at creation. */
export async function consultReceivable(
  db: Kysely<ReceivablesDatabase>,
  tenantId: string,
  accountReceivableId: string,
  timeZone: string,
): Promise<ConsultResult> {
  const row = await db
    .selectFrom('receivables')
    .select(SUMMARY_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('account_receivable_id', '=', accountReceivableId)
    .executeTakeFirst();
  if (!row) throw new ServiceError('not_found', `no receivable ${accountReceivableId}`);
  const s = summary(row, timeZone);
  return { ...s.common, payment_type: s.paymentType };
}

function summary(r: SummaryRow, timeZone: string) {
  return {
    common: {
      accounts_receivable_id: r.account_receivable_id_as_sent,
      client_name: r.client_name,
      status_payment: StateLabels[r.state],
      payment_date: r.payment_date ? formatLocalDateTime(r.payment_date, timeZone) : null,
      amount_due: fromCents(r.amount_cents),
      amount_paid: fromCents(r.amount_paid_cents ?? 0),
      fee_amount: fromCents(r.fee_cents ?? 0),
    },
    paymentType: PaymentTypeLabels[r.payment_type],
  };
}

function encodeCursor(r: SummaryRow): string {
  return Buffer.from(JSON.stringify([r.emission_date, r.account_receivable_id])).toString('base64url');
}

/** YYYY-MM-DD naming a day Postgres can store: years 0001 to 9999, months and days that exist. */
function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || value < '0001-01-01') return false;
  const day = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === value;
}

function decodeCursor(cursor: string): { emissionDate: string; id: string } {
  try {
    const [emissionDate, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    // A crafted cursor must fail here, not in Postgres (a 500): a real calendar date, a real UUID.
    if (typeof emissionDate !== 'string' || !isCalendarDate(emissionDate) || typeof id !== 'string' || !isUuid(id))
      throw new Error('bad cursor');
    return { emissionDate, id };
  } catch {
    throw new ServiceError('validation_failed', 'the cursor is not one this API handed out', [
      { path: '/cursor', message: 'is invalid' },
    ]);
  }
}
