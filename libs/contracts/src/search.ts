import { hasAtMostTwoDecimals } from '@payments/br-format';
import { Type, type Static } from '@sinclair/typebox';
import { IsoDate, NOT_BLANK_TEXT_PATTERN, OpaqueToken, Uuid } from './common';
import type { FieldError } from './errors';
import { MAX_MONEY_VALUE, PaymentTypeLabelValues, ReceivableStates, StatePaymentLabels } from './receivables';
import { compileValidator, type ValidationResult } from './validation';

/** Search filter values: every state, or `all`. */
export const SearchStates = ['all', ...ReceivableStates] as const;
export type SearchState = (typeof SearchStates)[number];

export const SEARCH_DEFAULT_LIMIT = 500;
export const SEARCH_MAX_LIMIT = 5000;

/** A payer name filter is a substring of at least 3 characters: fewer match too much, and a trigram index needs 3. */
export const PAYER_NAME_FILTER_MIN = 3;
export const PAYER_NAME_FILTER_MAX = 100;
export const OUR_NUMBER_FILTER_MAX = 40;
/** An our_number as banks write it: letters, digits, and the odd dot, dash or slash. */
export const OUR_NUMBER_FILTER_PATTERN = '^[0-9A-Za-z./-]+$';

/**
 * The optional filters added to the interface spec's search (docs/api.md, "Search"): each narrows
 * the state and emission-date selection, and they combine with AND.
 */
const searchFilterFields = {
  payer_name: Type.Optional(
    Type.String({
      minLength: PAYER_NAME_FILTER_MIN,
      maxLength: PAYER_NAME_FILTER_MAX,
      pattern: NOT_BLANK_TEXT_PATTERN,
      description: 'Part of the payer name, at least 3 characters; letter case and accents do not matter',
    }),
  ),
  payer_tax_id: Type.Optional(
    Type.String({
      format: 'cpf-cnpj',
      maxLength: 18,
      description: "The payer's CPF or CNPJ, punctuation optional",
    }),
  ),
  our_number: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: OUR_NUMBER_FILTER_MAX,
      pattern: OUR_NUMBER_FILTER_PATTERN,
      description: "The bank's our_number (nosso número), exactly",
    }),
  ),
  value: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      maximum: MAX_MONEY_VALUE,
      description: 'The charge amount, at most 2 decimals',
    }),
  ),
};
/** The names of the optional filters, as the request and the bus query spell them. */
export type SearchFilterField = keyof typeof searchFilterFields;

/** POST /api/v1/accounts-receivable/search (the interface spec; limit and cursor per docs/api.md, "Search"). */
export const SearchRequestSchema = Type.Object(
  {
    state: Type.Union(SearchStates.map((s) => Type.Literal(s))),
    start_date: IsoDate('First emission date, inclusive'),
    end_date: IsoDate('Last emission date, inclusive'),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_MAX_LIMIT, default: SEARCH_DEFAULT_LIMIT })),
    cursor: Type.Optional(OpaqueToken(512, 'X-Next-Cursor of the previous page')),
    ...searchFilterFields,
  },
  { $id: 'SearchRequest' },
);
export type SearchRequest = Static<typeof SearchRequestSchema>;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Rules the schema cannot say: start_date <= end_date, and a value of whole cents. Safe on any input. */
export function searchRequestRuleErrors(request: unknown): FieldError[] {
  if (typeof request !== 'object' || request === null) return [];
  const { start_date, end_date, value } = request as Record<string, unknown>;
  const errors: FieldError[] = [];
  if (typeof value === 'number' && !hasAtMostTwoDecimals(value))
    errors.push({ path: '/value', message: 'must have at most 2 decimals' });
  if (
    typeof start_date === 'string' &&
    typeof end_date === 'string' &&
    DATE.test(start_date) &&
    DATE.test(end_date) &&
    start_date > end_date
  ) {
    errors.push({ path: '/end_date', message: 'must not be before start_date' });
  }
  return errors;
}

const validateSearchSchema = compileValidator(SearchRequestSchema);

export function validateSearchRequest(input: unknown): ValidationResult<SearchRequest> {
  const schema = validateSearchSchema(input);
  const errors = schema.ok ? [] : [...schema.errors];
  for (const e of searchRequestRuleErrors(input)) if (!errors.some((x) => x.path === e.path)) errors.push(e);
  return errors.length === 0 ? { ok: true, value: input as SearchRequest } : { ok: false, errors };
}

/** ISO 8601 date-time with milliseconds and no zone, e.g. 2026-11-23T14:05:09.123. */
export const LOCAL_DATETIME_MS_PATTERN =
  '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d\\.\\d{3}$';

const summaryFields = {
  accounts_receivable_id: Uuid(),
  client_name: Type.String(),
  status_payment: Type.Union(
    StatePaymentLabels.map((l) => Type.Literal(l)),
    { description: 'Localized state label' },
  ),
};
const PaymentTypeLabel = () =>
  Type.Union(
    PaymentTypeLabelValues.map((l) => Type.Literal(l)),
    { description: 'naodefinido until paid' },
  );
const paymentFields = {
  payment_date: Type.Union(
    [
      Type.String({ pattern: LOCAL_DATETIME_MS_PATTERN, description: 'ISO 8601, fractional seconds, no zone' }),
      Type.Null(),
    ],
    { description: 'null when unpaid' },
  ),
  amount_due: Type.Number(),
  amount_paid: Type.Number(),
  fee_amount: Type.Number(),
};

/** An element of the search response: the type is spelled `paymento_type` here. */
export const SearchResultItemSchema = Type.Object(
  { ...summaryFields, paymento_type: PaymentTypeLabel(), ...paymentFields },
  { $id: 'SearchResultItem' },
);
export type SearchResultItem = Static<typeof SearchResultItemSchema>;

/** The search response: a plain array (next page cursor in header X-Next-Cursor). */
export const SearchResponseSchema = Type.Array(SearchResultItemSchema, { $id: 'SearchResponse' });
export type SearchResponse = Static<typeof SearchResponseSchema>;

/** POST /api/v1/accounts-receivable/{uuid}/consult-transaction: the type is spelled `payment_type` here. */
export const ConsultResultSchema = Type.Object(
  { ...summaryFields, payment_type: PaymentTypeLabel(), ...paymentFields },
  { $id: 'ConsultResult' },
);
export type ConsultResult = Static<typeof ConsultResultSchema>;
