export { formatTaxId, isValidCpf, isValidCnpj, isValidTaxId, taxIdDigits, type TaxIdKind, taxIdKind } from './tax-id';
