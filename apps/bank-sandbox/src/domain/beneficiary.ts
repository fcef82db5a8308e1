import { formatTaxId, taxIdDigits, taxIdKind } from '@payments/tax-id';
import { MAX_MERCHANT_CITY, MAX_MERCHANT_NAME, toMerchantText } from './br-code';
import type { Beneficiary } from './charge';
import type { PayeeAccount } from './slip-issuer';
import type { PayeeDetails } from './slip-pdf';

/**
 * A charge's beneficiary applied over the sandbox's own account (docs/architecture.md, "Each tenant is paid
 * into its own account"): its name, city and PIX key go into the BR Code, its agency and account into
 * the barcode when they fit the free field; whatever it leaves out stays the sandbox's.
 */
export function accountFor(sandbox: PayeeAccount, beneficiary: Beneficiary | null): PayeeAccount {
  if (!beneficiary) return sandbox;
  return {
    ...sandbox,
    agency: freeFieldDigits(beneficiary.agency, AGENCY_DIGITS) ?? sandbox.agency,
    account: freeFieldDigits(beneficiary.account, ACCOUNT_DIGITS) ?? sandbox.account,
    pix: {
      key: beneficiary.pixKey ?? sandbox.pix.key,
      merchantName: merchantField(beneficiary.name, MAX_MERCHANT_NAME),
      merchantCity: beneficiary.city ? merchantField(beneficiary.city, MAX_MERCHANT_CITY) : sandbox.pix.merchantCity,
    },
  };
}

/** The "Beneficiário" of a charge's slip: the charge's beneficiary as given, the sandbox's bank and wallet. */
export function payeeFor(sandbox: PayeeDetails, beneficiary: Beneficiary | null): PayeeDetails {
  if (!beneficiary) return sandbox;
  return {
    ...sandbox,
    name: beneficiary.name,
    taxId: beneficiary.taxId,
    agency: beneficiary.agency ?? sandbox.agency,
    account: beneficiary.account ?? sandbox.account,
    address: beneficiary.address,
  };
}

/**
 * A BR Code name or city (fields 59, 60): folded to upper-case ASCII and cut to the field's size, with
 * no space left dangling at the cut. Empty when nothing printable remains (intake refuses such text).
 */
export function merchantField(value: string, max: number): string {
  return toMerchantText(value).slice(0, max).trimEnd();
}

const AGENCY_DIGITS = 4;
const ACCOUNT_DIGITS = 7;

/** Agency or account as the free field wants it: digits once punctuation is gone, zero-padded; null when it does not fit. */
function freeFieldDigits(value: string | null, size: number): string | null {
  const digits = value?.replace(/[\s.\-/]/g, '') ?? '';
  return new RegExp(`^\\d{1,${size}}$`).test(digits) ? digits.padStart(size, '0') : null;
}

/** "CNPJ 12.345.678/0001-95" or "CPF 529.982.247-25": a tax id as a slip prints it, whatever punctuation it came with. */
export function printedTaxId(taxId: string): string {
  const kind = taxIdKind(taxIdDigits(taxId));
  return kind === null ? `CPF/CNPJ ${taxId}` : `${kind.toUpperCase()} ${formatTaxId(taxId)}`;
}
