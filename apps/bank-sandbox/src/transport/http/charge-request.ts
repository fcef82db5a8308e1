import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { isValidPixKey } from '@brazilian-utils/brazilian-utils';
import { Type, type Static } from '@sinclair/typebox';
import { isValidTaxId } from '@payments/tax-id';
import { merchantField } from '../../domain/beneficiary';
import { MAX_MERCHANT_CITY, MAX_MERCHANT_NAME } from '../../domain/br-code';
import { epochDay } from '../../domain/calendar-date';
import type { Beneficiary, ChargeOwner, ChargeTerms } from '../../domain/charge';

/** Body of POST /v1/charges. Amounts in integer cents; unknown fields are ignored. */
const MAX_TEXT = 255;
/** R$ 9,999,999,999.99, the largest value our receivables accept. */
export const MAX_AMOUNT_CENTS = 999_999_999_999;

/** The longest PIX key the DICT issues (an e-mail address). */
const MAX_PIX_KEY = 77;
const CalendarDate = Type.String({ format: 'date' });
const NonBlankText = Type.String({ minLength: 1, maxLength: MAX_TEXT, pattern: '\\S' });
const OptionalText = (maxLength = MAX_TEXT, pattern?: string) =>
  Type.Optional(Type.Union([Type.String(pattern ? { maxLength, pattern } : { maxLength }), Type.Null()]));

export const ChargeRequestSchema = Type.Object({
  kind: Type.Union([Type.Literal('hybrid_slip'), Type.Literal('pix')]),
  amount_cents: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_CENTS }),
  issue_date: CalendarDate,
  due_date: CalendarDate,
  payer: Type.Object({
    name: NonBlankText,
    tax_id: Type.String({ format: 'cpf-cnpj' }),
    address: OptionalText(),
    city: OptionalText(),
    state: OptionalText(2, '^([A-Za-z]{2})?$'),
    zip_code: OptionalText(9, '^(\\d{5}-?\\d{3})?$'),
  }),
  discount: Type.Optional(
    Type.Union([Type.Object({ amount_cents: Type.Integer({ minimum: 1 }), until: CalendarDate }), Type.Null()]),
  ),
  fine_percent_bp: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
  interest_per_day_cents: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_AMOUNT_CENTS })),
  instructions: Type.Optional(Type.Array(Type.String({ maxLength: MAX_TEXT }), { maxItems: 10 })),
  description_lines: Type.Optional(
    Type.Array(
      Type.Object({
        description: Type.String({ minLength: 1, maxLength: 500 }),
        quantity: Type.Number({ exclusiveMinimum: 0 }),
        price_cents: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT_CENTS }),
      }),
      { maxItems: 100 },
    ),
  ),
  reference: OptionalText(),
  /** Who is paid (printed on the slip, in the BR Code); absent or null: the sandbox's configured payee. */
  beneficiary: Type.Optional(
    Type.Union([
      Type.Object({
        name: NonBlankText,
        tax_id: Type.String({ format: 'cpf-cnpj' }),
        city: OptionalText(),
        pix_key: Type.Optional(Type.Union([Type.String({ maxLength: MAX_PIX_KEY, format: 'pix-key' }), Type.Null()])),
        agency: OptionalText(32),
        account: OptionalText(32),
        address: OptionalText(),
      }),
      Type.Null(),
    ]),
  ),
  /** The caller's account id (e.g. a UUID), kept with the charge and echoed in its webhook. */
  account_reference: Type.Optional(Type.Union([Type.String({ pattern: '^[!-~]{1,64}$' }), Type.Null()])),
});
export type ChargeRequest = Static<typeof ChargeRequestSchema>;

const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false });
addFormats(ajv, ['date']);
ajv.addFormat('cpf-cnpj', { type: 'string', validate: isValidTaxId });
ajv.addFormat('pix-key', { type: 'string', validate: (value: string) => isValidPixKey(value) });
const validateShape = ajv.compile<ChargeRequest>(ChargeRequestSchema);

export interface FieldProblem {
  path: string;
  message: string;
}

export type ParsedChargeRequest =
  { ok: true; terms: ChargeTerms; owner: ChargeOwner } | { ok: false; problems: FieldProblem[] };

/** Checks the body's shape, then the rules between fields a bank would check, and maps it to ChargeTerms. */
export function parseChargeRequest(body: unknown): ParsedChargeRequest {
  if (!validateShape(body)) return { ok: false, problems: onePerPath((validateShape.errors ?? []).map(describe)) };
  // Postgres text and jsonb cannot hold U+0000: refused here rather than failing the insert.
  const nul = nulPath(body, '', NUL_CHECK_DEPTH);
  if (nul !== null) return { ok: false, problems: [{ path: nul, message: 'must not contain U+0000' }] };
  const problems: FieldProblem[] = [...beneficiaryProblems(body.beneficiary)];
  if (epochDay(body.due_date) < epochDay(body.issue_date))
    problems.push({ path: '/due_date', message: 'must not be before issue_date' });
  // The barcode's due-date factor counts days from 1997-10-08 on.
  if (epochDay(body.due_date) <= epochDay('1997-10-07'))
    problems.push({ path: '/due_date', message: 'must be after 1997-10-07' });
  if (body.discount) {
    if (body.discount.amount_cents >= body.amount_cents)
      problems.push({ path: '/discount/amount_cents', message: 'must be less than amount_cents' });
    if (epochDay(body.discount.until) > epochDay(body.due_date))
      problems.push({ path: '/discount/until', message: 'must not be after due_date' });
  }
  if (problems.length > 0) return { ok: false, problems };
  const payer = body.payer;
  return {
    ok: true,
    owner: { beneficiary: beneficiaryOf(body.beneficiary), accountReference: body.account_reference ?? null },
    terms: {
      kind: body.kind,
      amountCents: body.amount_cents,
      issueDate: body.issue_date,
      dueDate: body.due_date,
      payer: {
        name: payer.name,
        taxId: payer.tax_id,
        address: payer.address || null,
        city: payer.city || null,
        state: payer.state ? payer.state.toUpperCase() : null,
        zipCode: payer.zip_code || null,
      },
      discount: body.discount ? { amountCents: body.discount.amount_cents, until: body.discount.until } : null,
      finePercentBp: body.fine_percent_bp ?? 0,
      interestPerDayCents: body.interest_per_day_cents ?? 0,
      instructions: body.instructions ?? [],
      descriptionLines: (body.description_lines ?? []).map((l) => ({
        description: l.description,
        quantity: l.quantity,
        priceCents: l.price_cents,
      })),
      reference: body.reference ?? null,
    },
  };
}

type BeneficiaryRequest = NonNullable<ChargeRequest['beneficiary']>;

/** Name and city must leave something for the BR Code once folded to ASCII (fields 59 and 60 cannot be empty). */
function beneficiaryProblems(beneficiary: BeneficiaryRequest | null | undefined): FieldProblem[] {
  if (!beneficiary) return [];
  const problems: FieldProblem[] = [];
  const message = 'must contain letters or digits printable in ASCII (the PIX BR Code carries it)';
  if (!merchantField(beneficiary.name, MAX_MERCHANT_NAME)) problems.push({ path: '/beneficiary/name', message });
  if (beneficiary.city?.trim() && !merchantField(beneficiary.city, MAX_MERCHANT_CITY))
    problems.push({ path: '/beneficiary/city', message });
  return problems;
}

/** Empty optional texts count as not given, as for the payer. */
function beneficiaryOf(beneficiary: BeneficiaryRequest | null | undefined): Beneficiary | null {
  if (!beneficiary) return null;
  const given = (value: string | null | undefined) => (value?.trim() ? value : null);
  return {
    name: beneficiary.name,
    taxId: beneficiary.tax_id,
    city: given(beneficiary.city),
    pixKey: beneficiary.pix_key ?? null,
    agency: given(beneficiary.agency),
    account: given(beneficiary.account),
    address: given(beneficiary.address),
  };
}

/** Stored fields lie at most this deep (description_lines/0/description); deeper ones are unknown and ignored. */
const NUL_CHECK_DEPTH = 4;

/** The JSON pointer of the first string within `depth` levels holding U+0000; null when there is none. */
function nulPath(value: unknown, path: string, depth: number): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path || '/' : null;
  if (typeof value !== 'object' || value === null || depth === 0) return null;
  for (const [key, item] of Object.entries(value)) {
    const itemPath = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const found = nulPath(item, itemPath, depth - 1);
    if (found !== null) return found;
  }
  return null;
}

/** ajv reports every branch of a union; one message per field is what a caller can act on. */
function onePerPath(problems: FieldProblem[]): FieldProblem[] {
  const byPath = new Map<string, FieldProblem>();
  for (const problem of problems) if (!byPath.has(problem.path)) byPath.set(problem.path, problem);
  return [...byPath.values()];
}

function describe(error: ErrorObject): FieldProblem {
  if (error.keyword === 'required')
    return { path: `${error.instancePath}/${String(error.params.missingProperty)}`, message: 'is required' };
  if (error.keyword === 'format' && error.params.format === 'cpf-cnpj')
    return { path: error.instancePath, message: 'must be a CPF or CNPJ with valid check digits' };
  if (error.keyword === 'format' && error.params.format === 'date')
    return { path: error.instancePath, message: 'must be a date YYYY-MM-DD' };
  if (error.keyword === 'format' && error.params.format === 'pix-key')
    return {
      path: error.instancePath,
      message: 'must be a PIX key: CPF, CNPJ, e-mail, mobile phone (+55...) or random key (UUID)',
    };
  if (error.keyword === 'pattern' && error.instancePath === '/account_reference')
    return { path: error.instancePath, message: 'must be 1 to 64 printable ASCII characters without spaces' };
  return { path: error.instancePath || '/', message: error.message ?? 'is invalid' };
}
