import type { Beneficiary, LedgerCharge } from '../../domain/charge';

/** A charge as the bank-like API answers it. Every key is always present (null when it does not apply). */
export interface ChargeResponse {
  charge_id: string;
  our_number: string;
  /** As given with the charge; null when none was. */
  account_reference: string | null;
  /** Who the charge pays, as given; null: the sandbox's configured payee. */
  beneficiary: BeneficiaryWire | null;
  status: LedgerCharge['status'];
  kind: LedgerCharge['kind'];
  amount_cents: number;
  issue_date: string;
  due_date: string;
  reference: string | null;
  barcode: string | null;
  typeable_line: string | null;
  pix_copy_and_paste: string;
  qrcode_image_url: string;
  pdf_url: string;
  created_at: string;
  cancelled_at: string | null;
  paid_at: string | null;
  amount_paid_cents: number | null;
  fee_cents: number | null;
  method: 'boleto' | 'pix' | 'manual' | null;
}

export interface BeneficiaryWire {
  name: string;
  tax_id: string;
  city: string | null;
  pix_key: string | null;
  agency: string | null;
  account: string | null;
  address: string | null;
}

export function chargeResponse(charge: LedgerCharge, publicUrl: string): ChargeResponse {
  const base = `${publicUrl}/v1/charges/${charge.chargeId}`;
  return {
    charge_id: charge.chargeId,
    our_number: charge.ourNumber,
    account_reference: charge.accountReference,
    beneficiary: charge.beneficiary && beneficiaryWire(charge.beneficiary),
    status: charge.status,
    kind: charge.kind,
    amount_cents: charge.amountCents,
    issue_date: charge.issueDate,
    due_date: charge.dueDate,
    reference: charge.reference,
    barcode: charge.barcode,
    typeable_line: charge.typeableLine,
    pix_copy_and_paste: charge.pixCopyAndPaste,
    qrcode_image_url: `${base}/qrcode.png`,
    pdf_url: `${base}/pdf`,
    created_at: charge.createdAt.toISOString(),
    cancelled_at: charge.cancelledAt?.toISOString() ?? null,
    paid_at: charge.settlement?.paidAt.toISOString() ?? null,
    amount_paid_cents: charge.settlement?.amountPaidCents ?? null,
    fee_cents: charge.settlement?.feeCents ?? null,
    method: charge.settlement?.method ?? null,
  };
}

function beneficiaryWire(b: Beneficiary): BeneficiaryWire {
  return {
    name: b.name,
    tax_id: b.taxId,
    city: b.city,
    pix_key: b.pixKey,
    agency: b.agency,
    account: b.account,
    address: b.address,
  };
}
