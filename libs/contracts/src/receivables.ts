import { hasAtMostTwoDecimals } from '@payments/br-format';
import { Type, type Static } from '@sinclair/typebox';
import { Batch, IsoDate, RequiredText, StatusMessageSchema, Uuid } from './common';
import type { PaymentData } from './callbacks';
import type { FieldError } from './errors';
import type { ProviderAccountVersion } from './provider-accounts';
import type { ConsultResult, SearchFilterField, SearchRequest, SearchResultItem } from './search';
import { compileValidator, type ValidationResult } from './validation';

/** Limits from docs/api.md, "Limits". */
export const MAX_URL_LENGTH = 2048;
export const MAX_ITEM_DESCRIPTION = 500;
export const MAX_ITEMS_PER_RECEIVABLE = 100;
/** The largest money value accepted: 9,999,999,999.99. */
export const MAX_MONEY_VALUE = 9_999_999_999.99;

/** payment_method values of the interface spec: 1 = hybrid bank slip (slip plus PIX), 3 = PIX. */
export const PaymentMethods = { hybridSlip: 1, pix: 3 } as const;
export type PaymentMethod = (typeof PaymentMethods)[keyof typeof PaymentMethods];

export const DiscountTypes = ['NaoTemDesconto', 'ValorFixoAteDataInformada'] as const;
export type DiscountType = (typeof DiscountTypes)[number];

/** A callback address: an absolute http or https URL of at most 2,048 characters. */
export const CallbackUrl = (description = 'http or https URL that receives the callbacks') =>
  Type.String({ format: 'uri', maxLength: MAX_URL_LENGTH, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', description });

/**
 * Rules a caller adds to every item of a create batch, run before the batch's own cross-field rules
 * (the gateway adds where a url_callback may point, a policy of the running system, not a shape).
 */
export type ItemRules = (item: unknown, index: number) => FieldError[];

const Money = (description?: string) => Type.Number({ minimum: 0, maximum: MAX_MONEY_VALUE, description });

export const ReceivableLineItemSchema = Type.Object({
  description: RequiredText(MAX_ITEM_DESCRIPTION),
  quantity: Type.Number({ exclusiveMinimum: 0 }),
  price: Money('Unit price, at most 2 decimals'),
});
export type ReceivableLineItem = Static<typeof ReceivableLineItemSchema>;

/** One item of POST /api/v1/accounts-receivable (the interface spec; required fields per docs/api.md, Receivables). */
export const ReceivableCreateItemSchema = Type.Object(
  {
    url_callback: CallbackUrl(),
    client_id: Uuid('Client identifier in the ERP'),
    payment_slip_id: Uuid('Booklet (carne) identifier in the ERP'),
    account_receivable_id: Uuid('Receivable identifier in the ERP'),
    payment_method: Type.Union([Type.Literal(PaymentMethods.hybridSlip), Type.Literal(PaymentMethods.pix)], {
      description: '1 = hybrid bank slip (slip plus PIX), 3 = PIX',
    }),
    items: Type.Optional(Type.Array(ReceivableLineItemSchema, { maxItems: MAX_ITEMS_PER_RECEIVABLE })),
    due_date: IsoDate(),
    emission_date: IsoDate(),
    value: Type.Number({
      exclusiveMinimum: 0,
      maximum: MAX_MONEY_VALUE,
      description: 'Charge amount, at most 2 decimals',
    }),
    discount_type: Type.Union(DiscountTypes.map((t) => Type.Literal(t))),
    discount_date: Type.Optional(Type.Union([IsoDate('Last date for the discount'), Type.Null()])),
    discount_value: Type.Optional(Type.Union([Money('Discount amount, at most 2 decimals'), Type.Null()])),
    fine_value: Type.Optional(
      Type.Number({ minimum: 0, maximum: 100, default: 0, description: 'Late penalty, a percentage' }),
    ),
    interest_amount: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: MAX_MONEY_VALUE,
        default: 0,
        description: 'Interest charged per day of delay',
      }),
    ),
  },
  { $id: 'ReceivableCreateItem' },
);
export type ReceivableCreateItem = Static<typeof ReceivableCreateItemSchema>;

export const ReceivablesCreateRequestSchema = Batch(ReceivableCreateItemSchema, 'ReceivablesCreateRequest');
export type ReceivablesCreateRequest = Static<typeof ReceivablesCreateRequestSchema>;

/**
 * 202 reply of POST /api/v1/accounts-receivable. `existing` is beside the spec's status and message:
 * the batch's ids the tenant had used already (left as they are), spelled as first sent. receivables-svc
 * always sends it; it is optional because a receivables-svc of the previous release, still running
 * during a rolling deploy, answers without it.
 */
export const ReceivablesCreateResponseSchema = Type.Object(
  {
    ...StatusMessageSchema.properties,
    existing: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'The account_receivable_id of each charge of the batch that already existed (not created again), in batch order, as spelled when it was first created; empty when every charge is new',
      }),
    ),
  },
  { $id: 'ReceivablesCreateResponse' },
);
export type ReceivablesCreateResponse = Static<typeof ReceivablesCreateResponseSchema>;

/** 202 reply of POST /api/v1/accounts-receivable/{uuid}/cancel. */
export const CancelResponseSchema = Type.Object(
  { status: Type.Literal('success'), message: Type.String() },
  { $id: 'CancelResponse' },
);
export type CancelResponse = Static<typeof CancelResponseSchema>;

/* ------------------------------------------------------------------------------------------------ */
/* Cross-field rules                                                                                */
/* ------------------------------------------------------------------------------------------------ */

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isDate = (v: unknown): v is string => typeof v === 'string' && DATE.test(v);

/**
 * The rules JSON Schema cannot say, for item `index` of a create batch. Safe on any input (it also runs
 * on items that failed the schema): a field of the wrong type is left to the schema's error.
 */
export function receivableItemRuleErrors(item: unknown, index: number): FieldError[] {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return [];
  const r = item as Record<string, unknown>;
  const at = (field: string) => `/${index}/${field}`;
  const errors: FieldError[] = [];

  if (isNumber(r.value) && !hasAtMostTwoDecimals(r.value))
    errors.push({ path: at('value'), message: 'must have at most 2 decimals' });
  if (isNumber(r.discount_value) && !hasAtMostTwoDecimals(r.discount_value)) {
    errors.push({ path: at('discount_value'), message: 'must have at most 2 decimals' });
  }
  if (isNumber(r.interest_amount) && !hasAtMostTwoDecimals(r.interest_amount)) {
    errors.push({ path: at('interest_amount'), message: 'must have at most 2 decimals' });
  }
  // A percentage with 2 decimals (e.g. 2.25 %), as banks register it.
  if (isNumber(r.fine_value) && !hasAtMostTwoDecimals(r.fine_value))
    errors.push({ path: at('fine_value'), message: 'must have at most 2 decimals' });
  if (isDate(r.emission_date) && isDate(r.due_date) && r.due_date < r.emission_date) {
    errors.push({ path: at('due_date'), message: 'must not be before emission_date' });
  }
  if (Array.isArray(r.items)) {
    r.items.forEach((line, j) => {
      const price = typeof line === 'object' && line !== null ? (line as Record<string, unknown>).price : undefined;
      if (isNumber(price) && !hasAtMostTwoDecimals(price))
        errors.push({ path: at(`items/${j}/price`), message: 'must have at most 2 decimals' });
    });
  }

  if (r.discount_type === 'ValorFixoAteDataInformada') {
    if (r.discount_date === undefined || r.discount_date === null) {
      errors.push({
        path: at('discount_date'),
        message: 'is required when discount_type is ValorFixoAteDataInformada',
      });
    } else if (isDate(r.discount_date) && isDate(r.due_date) && r.discount_date > r.due_date) {
      errors.push({ path: at('discount_date'), message: 'must not be after due_date' });
    }
    if (r.discount_value === undefined || r.discount_value === null) {
      errors.push({
        path: at('discount_value'),
        message: 'is required when discount_type is ValorFixoAteDataInformada',
      });
    } else if (isNumber(r.discount_value)) {
      if (r.discount_value <= 0)
        errors.push({
          path: at('discount_value'),
          message: 'must be greater than 0 when discount_type is ValorFixoAteDataInformada',
        });
      else if (isNumber(r.value) && r.discount_value >= r.value)
        errors.push({ path: at('discount_value'), message: 'must be less than value' });
    }
  }
  return errors;
}

const validateReceivablesSchema = compileValidator(ReceivablesCreateRequestSchema);

/**
 * An account_receivable_id twice in one batch, in any letter case, names every item that has it
 * (`/0/account_receivable_id` and `/3/account_receivable_id`), each message listing them all: the
 * ERP learns which of its charges collide instead of the later one being dropped (docs/api.md).
 */
export function duplicateIdErrors(items: readonly unknown[]): FieldError[] {
  const indexesById = new Map<string, number[]>();
  items.forEach((item, index) => {
    if (typeof item !== 'object' || item === null) return;
    const id = (item as Record<string, unknown>).account_receivable_id;
    if (typeof id !== 'string') return;
    const key = id.toLowerCase();
    indexesById.set(key, [...(indexesById.get(key) ?? []), index]);
  });
  return [...indexesById.values()]
    .filter((indexes) => indexes.length > 1)
    .flatMap((indexes) =>
      indexes.map((index) => ({
        path: `/${index}/account_receivable_id`,
        message: `is in the batch more than once (items ${indexes.join(', ')}); send each charge once`,
      })),
    );
}

/** Leading batch index of a path (`/3/value` -> 3), for ordering errors by item. */
const itemIndex = (path: string) => {
  const m = /^\/(\d+)/.exec(path);
  return m ? Number(m[1]) : -1;
};

/**
 * Validates a create batch: the schema (which also removes unknown fields and fills defaults), then the
 * cross-field rules of every item, after the caller's `itemRules`. All errors come back together, one
 * per path, in item order.
 */
export function validateReceivablesBatch(
  input: unknown,
  itemRules: ItemRules = () => [],
): ValidationResult<ReceivableCreateItem[]> {
  const schema = validateReceivablesSchema(input);
  const errors: FieldError[] = schema.ok ? [] : [...schema.errors];
  if (Array.isArray(input)) {
    const seen = new Set(errors.map((e) => e.path));
    const ruleErrors = input.flatMap((item, i) => [...itemRules(item, i), ...receivableItemRuleErrors(item, i)]);
    for (const e of [...ruleErrors, ...duplicateIdErrors(input)]) {
      if (seen.has(e.path)) continue;
      seen.add(e.path);
      errors.push(e);
    }
  }
  if (errors.length === 0) return { ok: true, value: input as ReceivableCreateItem[] };
  const ordered = errors
    .map((e, n) => ({ e, n }))
    .sort((a, b) => itemIndex(a.e.path) - itemIndex(b.e.path) || a.n - b.n);
  return { ok: false, errors: ordered.map(({ e }) => e) };
}

/* ------------------------------------------------------------------------------------------------ */
/* States and labels                                                                                */
/* ------------------------------------------------------------------------------------------------ */

/** Internal state names (also the search filter values, besides `all`). */
export const ReceivableStates = ['pending', 'approved', 'rejected', 'cancelled'] as const;
export type ReceivableState = (typeof ReceivableStates)[number];

export const StatePaymentLabels = ['Pendente', 'Aprovada', 'Rejeitada', 'Cancelada'] as const;
export type StateLabel = (typeof StatePaymentLabels)[number];

/** The localized status_payment label sent on the wire for each state. */
export const StateLabels: Record<ReceivableState, StateLabel> = {
  pending: 'Pendente',
  approved: 'Aprovada',
  rejected: 'Rejeitada',
  cancelled: 'Cancelada',
};

/** Internal payment types: `undefined` until paid. */
export const PaymentTypes = ['undefined', 'boleto', 'pix', 'manual'] as const;
export type PaymentType = (typeof PaymentTypes)[number];

export const PaymentTypeLabelValues = ['naodefinido', 'Boleto', 'Pix', 'Manual'] as const;
export type PaymentTypeLabel = (typeof PaymentTypeLabelValues)[number];

/** The wire value of paymento_type / payment_type for each internal payment type. */
export const PaymentTypeLabels: Record<PaymentType, PaymentTypeLabel> = {
  undefined: 'naodefinido',
  boleto: 'Boleto',
  pix: 'Pix',
  manual: 'Manual',
};

/* ------------------------------------------------------------------------------------------------ */
/* Bus messages (gateway -> receivables-svc)                                                        */
/* ------------------------------------------------------------------------------------------------ */

export interface ReceivablesCreateCommand {
  tenant_id: string;
  /** The tenant's provider account as it stands now: every receivable of the batch is registered with it. */
  provider_account: ProviderAccountVersion;
  receivables: ReceivableCreateItem[];
}
export interface ReceivableCancelCommand {
  tenant_id: string;
  account_receivable_id: string;
}
/** The filter part of a search request, the optional filters as the ERP sent them (receivables-svc normalizes). */
export type ReceivablesSearchQuery = Pick<SearchRequest, 'state' | 'start_date' | 'end_date' | SearchFilterField>;
export interface ReceivablesSearchCommand {
  tenant_id: string;
  query: ReceivablesSearchQuery;
  limit: number;
  cursor?: string;
}
export type ReceivableSearchResult = SearchResultItem;
export interface ReceivablesSearchReply {
  items: ReceivableSearchResult[];
  next_cursor: string | null;
  /**
   * True from a receivables-svc that applies the optional filters (payer_name, payer_tax_id,
   * our_number, value); absent from an older one, which would answer the search without them.
   */
  filters_applied?: boolean;
}
export interface ReceivableConsultCommand {
  tenant_id: string;
  account_receivable_id: string;
}
export type ReceivableConsultReply = ConsultResult;

/**
 * GET /api/v1/accounts-receivable/{uuid}: what the charge was issued with, as a support person is
 * asked it on the phone (its due date, amount and payer with tax id), in the ERP's id spellings. An
 * addition to the interface spec: consult answers the state and payment, this the charge itself.
 */
export const ReceivableDetailSchema = Type.Object(
  {
    accounts_receivable_id: Uuid(),
    client_id: Uuid('Client identifier in the ERP'),
    payment_slip_id: Uuid('Booklet (carne) identifier in the ERP'),
    payment_method: Type.Integer({ description: 'As created: 1 hybrid bank slip (slip plus PIX), 3 PIX' }),
    status_payment: Type.Union(
      StatePaymentLabels.map((l) => Type.Literal(l)),
      { description: 'Localized state label, as consult answers it' },
    ),
    value: Type.Number({ description: 'The amount due, in reais' }),
    emission_date: IsoDate('Emission date'),
    due_date: IsoDate('Due date'),
    payer: Type.Object(
      {
        name: Type.String(),
        tax_id: Type.String({ description: "The payer's CPF (11 characters) or CNPJ (14), without punctuation" }),
      },
      { description: 'The payer as the charge was issued for (printed on the slip)' },
    ),
  },
  { $id: 'ReceivableDetail' },
);
export type ReceivableDetail = Static<typeof ReceivableDetailSchema>;

/** gateway -> receivables-svc: a tenant's receivable as it was issued; not_found for another tenant's id. */
export interface ReceivableDetailCommand {
  tenant_id: string;
  account_receivable_id: string;
}
export type ReceivableDetailReply = ReceivableDetail;

/**
 * gateway -> receivables-svc: the payment data of a tenant's registered receivable, by the ERP's id
 * (GET /api/v1/accounts-receivable/{uuid}/payment-data); not_found while it is not registered, and
 * for another tenant's id.
 */
export interface ReceivablePaymentDataCommand {
  tenant_id: string;
  account_receivable_id: string;
}
/** The `payment_data` of the registered callback, field for field. */
export type ReceivablePaymentDataReply = PaymentData;

/**
 * gateway -> receivables-svc: the slip PDF behind a (verified) signed link, for providers that serve
 * it only behind their own authentication (Inter): receivables-svc fetches it with the account's credentials.
 */
export interface SlipPdfCommand {
  receivable_id: string;
}
export interface SlipPdfReply {
  pdf_base64: string;
}
/** Gateway path of signed slip PDF links: `${SLIP_PDF_PATH}/{receivable_id}?expires=..&signature=..`. */
export const SLIP_PDF_PATH = '/api/v1/bank-slips/downloads';

/**
 * gateway -> receivables-svc: the PIX QR code PNG behind a (verified) signed link, for providers that
 * serve no QR image of their own (Inter): receivables-svc draws it from the charge's PIX copy-and-paste.
 */
export interface SlipQrCodeCommand {
  receivable_id: string;
}
export interface SlipQrCodeReply {
  png_base64: string;
}
/** Gateway path of signed QR code links: `${SLIP_QRCODE_PATH}/{receivable_id}?expires=..&signature=..`. */
export const SLIP_QRCODE_PATH = '/api/v1/bank-slips/qrcodes';
