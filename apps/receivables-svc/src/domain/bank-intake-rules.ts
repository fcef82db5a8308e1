import { toCents } from '@payments/br-format';
import {
  PaymentMethods,
  type ErrorCode,
  type FieldError,
  type ProviderAccountVersion,
  type ProviderKind,
  type ReceivableCreateItem,
} from '@payments/contracts';
import type { Payer } from './ports';
import { formatLocalDateTime } from './local-datetime';

/**
 * What a bank will refuse, refused at intake in our field names ("What an ERP is told"):
 * a charge the bank cannot issue gets 422 at POST instead of 202 and a rejection later in the bank's
 * own field names. The sandbox refuses nothing here: its `reject` mode is a registration outcome.
 */
export type BankIntakeRules = (items: readonly IntakeItem[], now: Date) => FieldError[];

/** One item of the batch with its index in it and its payer (every payer is registered by then). */
export interface IntakeItem {
  index: number;
  item: ReceivableCreateItem;
  payer: Payer;
}

export const BANK_INTAKE_RULES: Record<ProviderKind, BankIntakeRules> = {
  sandbox: () => [],
  inter: interIntakeErrors,
  pix: pixIntakeErrors,
};

/** A kind of charge the account cannot issue at all, with its own error code: each item it names, in batch order. */
export interface PaymentMethodRefusal {
  code: Extract<ErrorCode, 'pix_key_required' | 'slip_not_supported'>;
  message: string;
  errors: FieldError[];
}

/**
 * Charges of a kind the account cannot issue, refused before anything else: an `inter` account without a
 * PIX key has no PIX API charge to make (pix_key_required), and a `pix` account takes PIX charges only
 * (slip_not_supported). null when every item is a kind the account issues.
 */
export function paymentMethodRefusal(
  account: Pick<ProviderAccountVersion, 'provider' | 'beneficiary'>,
  items: readonly IntakeItem[],
): PaymentMethodRefusal | null {
  if (account.provider === 'inter' && !account.beneficiary.pix_key) {
    const errors = items
      .filter(({ item }) => item.payment_method === PaymentMethods.pix)
      .map(({ index }) => ({
        path: `/${index}/payment_method`,
        message: 'a PIX charge (3) needs a PIX key on the bank account (tenant account --pix-key)',
      }));
    return errors.length === 0
      ? null
      : {
          code: 'pix_key_required',
          message: "the tenant's bank account has no PIX key, so it cannot issue PIX charges; nothing was stored",
          errors,
        };
  }
  if (account.provider === 'pix') {
    const errors = items
      .filter(({ item }) => item.payment_method !== PaymentMethods.pix)
      .map(({ index }) => ({
        path: `/${index}/payment_method`,
        message: 'this bank account issues PIX charges (3) only',
      }));
    return errors.length === 0
      ? null
      : {
          code: 'slip_not_supported',
          message: "the tenant's bank account takes PIX charges only; nothing was stored",
          errors,
        };
  }
  return null;
}

/*
 * Inter's limits, from its API reference (developers.inter.co/references/cobranca-bolepix), POST
 * /cobrancas: valorNominal 2.5 to 99999999.99; the payer (Pagador) requires nome (1..100), cpfCnpj,
 * endereco (1..100), cidade (1..60), uf and cep (8 digits), and takes numero (10), bairro (60) and
 * email (50) at most; a charge due today is issued only until 19:59 (Brasília).
 */
const INTER_MIN_CENTS = 250;
const INTER_MAX_CENTS = 9_999_999_999;
const BRASILIA = 'America/Sao_Paulo';
/** The last minute Inter issues a charge due the same day: 19:59 Brasília time. */
const INTER_SAME_DAY_UNTIL = '19:59';

/** Our client fields as Inter's Pagador takes them: required or not, and at most how long. */
const INTER_PAYER_FIELDS: ReadonlyArray<{ field: ClientField; required: boolean; max: number }> = [
  { field: 'name', required: true, max: 100 },
  { field: 'address', required: true, max: 100 },
  { field: 'number', required: false, max: 10 },
  { field: 'neighborhood', required: false, max: 60 },
  { field: 'city', required: true, max: 60 },
  { field: 'email', required: false, max: 50 },
];

/** Our client field names (POST /api/v1/clients) and where the payer holds each. */
const CLIENT_FIELDS = {
  name: (p: Payer) => p.name,
  address: (p: Payer) => p.address,
  number: (p: Payer) => p.number,
  neighborhood: (p: Payer) => p.neighborhood,
  city: (p: Payer) => p.city,
  email: (p: Payer) => p.email,
} as const;
type ClientField = keyof typeof CLIENT_FIELDS;

export function interIntakeErrors(items: readonly IntakeItem[], now: Date): FieldError[] {
  const today = brasiliaNow(now);
  return items.flatMap(({ index, item, payer }) => {
    const errors: FieldError[] = [];
    // A PIX charge is a cobv at Inter's PIX API, whose devedor needs no address (the slip's payer does).
    const payerProblem = item.payment_method === PaymentMethods.pix ? null : interPayerProblem(payer);
    if (payerProblem) errors.push({ path: `/${index}/client_id`, message: payerProblem });
    const cents = toCents(item.value);
    if (cents < INTER_MIN_CENTS)
      errors.push({ path: `/${index}/value`, message: 'Inter issues charges of at least 2.50 (R$ 2,50)' });
    else if (cents > INTER_MAX_CENTS)
      errors.push({ path: `/${index}/value`, message: 'Inter issues charges of at most 99999999.99' });
    const dueProblem = interDueDateProblem(item.due_date, today);
    if (dueProblem) errors.push({ path: `/${index}/due_date`, message: dueProblem });
    return errors;
  });
}

/**
 * What any bank's PIX API refuses of a cobv (the standard: calendario.dataDeVencimento not before the
 * day the charge is created): a due date in the past, in Brasília, the PIX arrangement's calendar.
 */
export function pixIntakeErrors(items: readonly IntakeItem[], now: Date): FieldError[] {
  const today = brasiliaNow(now).date;
  return items.flatMap(({ index, item }) =>
    item.due_date < today
      ? [
          {
            path: `/${index}/due_date`,
            message: `a PIX charge cannot be due in the past (today is ${today} in Brasília)`,
          },
        ]
      : [],
  );
}

/** Why Inter cannot take this client as a payer, in our client field names; null when it can. */
function interPayerProblem(payer: Payer): string | null {
  const missing: string[] = [];
  const tooLong: string[] = [];
  for (const { field, required, max } of INTER_PAYER_FIELDS) {
    const value = (CLIENT_FIELDS[field](payer) ?? '').trim();
    if (value === '' && required) missing.push(field);
    else if (value.length > max) tooLong.push(`${field} (at most ${max} characters)`);
  }
  if (!payer.state) missing.push('state');
  const zip = (payer.zipCode ?? '').replace(/\D/g, '');
  if (zip === '') missing.push('zip_code');
  else if (zip.length !== 8) tooLong.push('zip_code (8 digits)');
  if (missing.length === 0 && tooLong.length === 0) return null;
  const parts = [
    ...(missing.length > 0 ? [`missing ${missing.join(', ')}`] : []),
    ...(tooLong.length > 0 ? [`too long or malformed ${tooLong.join(', ')}`] : []),
  ];
  return `Inter needs the client's address to issue a charge: ${parts.join('; ')}. Update the client (PUT /api/v1/clients/{client_id}) and send the charge again`;
}

function interDueDateProblem(dueDate: string, now: { date: string; time: string }): string | null {
  if (dueDate < now.date) return `Inter does not issue a charge due in the past (today is ${now.date} in Brasília)`;
  if (dueDate === now.date && now.time > INTER_SAME_DAY_UNTIL)
    return `Inter issues a charge due today only until ${INTER_SAME_DAY_UNTIL} Brasília time (now ${now.time}): give a later due_date`;
  return null;
}

/** The date (YYYY-MM-DD) and time (HH:MM) in Brasília at `now`: Inter's clock for due dates. */
export function brasiliaNow(now: Date): { date: string; time: string } {
  const local = formatLocalDateTime(now, BRASILIA);
  return { date: local.slice(0, 10), time: local.slice(11, 16) };
}
