import type { SettlementMethod } from './money';

/** A charge as the sandbox bank keeps it. English names; the wire mapping lives in transport/http/. */
export type ChargeKind = 'hybrid_slip' | 'pix';
export type ChargeStatus = 'registered' | 'paid' | 'cancelled';

export interface Payer {
  name: string;
  taxId: string;
  address: string | null;
  city: string | null;
  state: string | null;
  zipCode: string | null;
}

export interface Discount {
  amountCents: number;
  /** Last day the discount applies, YYYY-MM-DD. */
  until: string;
}

export interface DescriptionLine {
  description: string;
  quantity: number;
  priceCents: number;
}

/** What the payee asks the bank to collect. */
export interface ChargeTerms {
  kind: ChargeKind;
  amountCents: number;
  issueDate: string;
  dueDate: string;
  payer: Payer;
  discount: Discount | null;
  /** Late fine, in basis points of the amount (200 = 2 %). */
  finePercentBp: number;
  interestPerDayCents: number;
  instructions: string[];
  descriptionLines: DescriptionLine[];
  /** The payee's own reference, echoed back. */
  reference: string | null;
}

/** What the bank hands back for paying: slip data (hybrid slips only) and the PIX BR Code (always). */
export interface PaymentData {
  ourNumber: string;
  barcode: string | null;
  typeableLine: string | null;
  pixCopyAndPaste: string;
}

export interface Settlement {
  paidAt: Date;
  amountPaidCents: number;
  feeCents: number;
  method: SettlementMethod;
}

export interface Charge extends ChargeTerms, PaymentData {
  chargeId: string;
  status: ChargeStatus;
  createdAt: Date;
  cancelledAt: Date | null;
  settlement: Settlement | null;
}

/** Who is paid by a charge of the native API, when the caller names someone other than the sandbox's payee. */
export interface Beneficiary {
  name: string;
  /** CPF or CNPJ as the caller wrote it (check digits valid). */
  taxId: string;
  /** null: the sandbox's configured city goes into the BR Code. */
  city: string | null;
  /** null: the sandbox's own PIX key. */
  pixKey: string | null;
  agency: string | null;
  account: string | null;
  address: string | null;
}

/** Whose a charge is: the beneficiary it pays (null: the sandbox's payee) and the caller's account id, echoed back. */
export interface ChargeOwner {
  beneficiary: Beneficiary | null;
  accountReference: string | null;
}

/** A charge in the native API's ledger. */
export interface LedgerCharge extends Charge, ChargeOwner {}

/** Methods a charge can be settled by: a PIX charge has no slip to pay. */
export function acceptsMethod(kind: ChargeKind, method: SettlementMethod): boolean {
  return method !== 'boleto' || kind === 'hybrid_slip';
}
