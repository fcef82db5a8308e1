import { randomUUID } from 'node:crypto';
import type { ClientCreateItem, ReceivableCreateItem } from '@payments/contracts';

/** Valid ids to build requests with (check digits verified in libs/tax-id tests). */
export const VALID_CPF = '529.982.247-25';
export const VALID_CNPJ = '11.222.333/0001-81';
export const VALID_ALPHANUMERIC_CNPJ = '12.ABC.345/01DE-35';

/**
 * A date `days` from today in Brasília, YYYY-MM-DD: the calendar an ERP in Brazil and the console
 * use. Today in UTC is tomorrow there from 21:00 Brasília time.
 */
export function brasiliaDate(days = 0): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(
    new Date(Date.now() + days * 86_400_000),
  );
}

/**
 * A valid client. The defaults are checked against the contract type (`satisfies`); the
 * result stays loosely typed, since tests override fields with invalid values on purpose.
 */
export function clientPayload(overrides: Record<string, unknown> = {}) {
  const valid = {
    client_id: randomUUID() as string,
    name: 'Maria da Silva',
    cnpj_cpf: VALID_CPF,
    address: 'Rua das Flores',
    number: '123',
    neighborhood: 'Centro',
    city: 'São Paulo',
    state: 'SP',
    zip_code: '01310-100',
    complement: 'Apto 4',
    telephone: '1133334444',
    phone_number: '11999998888',
    email: 'maria@example.com',
  } satisfies ClientCreateItem;
  return { ...valid, ...overrides };
}

/** A valid receivable creation item for a registered client. */
export function receivablePayload(clientId: string, urlCallback: string, overrides: Record<string, unknown> = {}) {
  const valid = {
    url_callback: urlCallback,
    client_id: clientId,
    payment_slip_id: randomUUID() as string,
    account_receivable_id: randomUUID() as string,
    payment_method: 1,
    items: [{ description: 'Mensalidade', quantity: 1, price: 150.75 }],
    due_date: '2027-12-15',
    emission_date: '2026-11-23',
    value: 150.75,
    discount_type: 'NaoTemDesconto',
    fine_value: 2,
    interest_amount: 0.05,
  } satisfies ReceivableCreateItem;
  return { ...valid, ...overrides };
}
