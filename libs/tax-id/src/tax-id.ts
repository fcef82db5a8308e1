import { isValidCnpj as libIsValidCnpj, isValidCpf as libIsValidCpf } from '@brazilian-utils/brazilian-utils';

/**
 * Brazilian taxpayer ids: CPF (people) and CNPJ (companies, numeric or the alphanumeric format in force
 * since July 2026). The check-digit arithmetic is @brazilian-utils'; this module only fixes which
 * written forms we accept: bare, or with the official punctuation in the official places.
 */
export type TaxIdKind = 'cpf' | 'cnpj';

const CPF_SHAPE = /^\d{3}\.?\d{3}\.?\d{3}-?\d{2}$/;
// Alphanumeric CNPJ: 12 base characters [0-9A-Z], then 2 numeric check digits.
const CNPJ_SHAPE = /^[0-9A-Z]{2}\.?[0-9A-Z]{3}\.?[0-9A-Z]{3}\/?[0-9A-Z]{4}-?\d{2}$/i;

export function isValidCpf(value: string): boolean {
  return CPF_SHAPE.test(value) && libIsValidCpf(value);
}

export function isValidCnpj(value: string): boolean {
  return CNPJ_SHAPE.test(value) && libIsValidCnpj(value, { version: 2 });
}

/** Which kind a well-formed value is, by its length without punctuation; null when neither shape fits. */
export function taxIdKind(value: string): TaxIdKind | null {
  if (CPF_SHAPE.test(value)) return 'cpf';
  if (CNPJ_SHAPE.test(value)) return 'cnpj';
  return null;
}

export function isValidTaxId(value: string): boolean {
  const kind = taxIdKind(value);
  if (kind === 'cpf') return isValidCpf(value);
  if (kind === 'cnpj') return isValidCnpj(value);
  return false;
}

/** The id without punctuation, upper case: the form to compare and index on. */
export function taxIdDigits(value: string): string {
  return value.replace(/[.\-/\s]/g, '').toUpperCase();
}

/**
 * A CPF or CNPJ (numeric or alphanumeric), bare or punctuated, in the official punctuation:
 * 123.456.789-09, 12.345.678/0001-95; anything else as given.
 */
export function formatTaxId(taxId: string): string {
  const d = taxIdDigits(taxId);
  switch (taxIdKind(d)) {
    case 'cpf':
      return `${d.slice(0, 3)}.${d.slice(3, 6)}.${d.slice(6, 9)}-${d.slice(9)}`;
    case 'cnpj':
      return `${d.slice(0, 2)}.${d.slice(2, 5)}.${d.slice(5, 8)}/${d.slice(8, 12)}-${d.slice(12)}`;
    default:
      return taxId;
  }
}
