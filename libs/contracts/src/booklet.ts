import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common';
import { CallbackUrl } from './receivables';
import { compileValidator } from './validation';
import type { Beneficiary } from './provider-accounts';

/** POST /api/v1/bank-slip-booklet/{uuid}: the uuid is the payment_slip_id. */
export const BookletRequestSchema = Type.Object(
  { url_callback: CallbackUrl('http or https URL that receives the sent callback') },
  { $id: 'BookletRequest' },
);
export type BookletRequest = Static<typeof BookletRequestSchema>;

/** The schema only: where the callback may point is the gateway's policy, checked after. */
export const validateBookletRequest = compileValidator(BookletRequestSchema);

/** 202 reply: a synchronous "preparing" answer, not a callback. */
export const BookletResponseSchema = Type.Object(
  { success: Type.Literal(true), type: Type.Literal('preparing'), message: Type.String(), payment_slip_id: Uuid() },
  { $id: 'BookletResponse' },
);
export type BookletResponse = Static<typeof BookletResponseSchema>;

/** Bus message (gateway -> booklet-svc). */
export interface BookletRequestCommand {
  tenant_id: string;
  payment_slip_id: string;
  url_callback: string;
  /**
   * The request's Idempotency-Key: with the tenant and the payment slip id it names the booklet, so a
   * retried request (after a timeout, a 5xx or a gateway crash) finds the booklet the first one made.
   * Absent from an older gateway: the booklet then gets a random id.
   */
  idempotency_key?: string;
}

/**
 * booklet-svc -> receivables-svc: the installments of a payment slip id that are pending or paid,
 * ordered by due date (cancelled and rejected ones left out), with the beneficiary they were issued for.
 */
export interface InstallmentsCommand {
  tenant_id: string;
  payment_slip_id: string;
}
export interface InstallmentView {
  account_receivable_id: string;
  due_date: string;
  amount_cents: number;
  instructions: string[];
  /** pending: payable; approved: paid (payment_date says when). */
  state: 'pending' | 'approved';
  /** When it was paid (ISO 8601), for approved installments; null otherwise. */
  payment_date: string | null;
  /** false while the provider has not registered it yet (no payment data). */
  registered: boolean;
  our_number: string | null;
  typeable_line: string | null;
  barcode: string | null;
  pix_copy_and_paste: string | null;
  payer: {
    name: string;
    cnpj_cpf: string;
    address: string | null;
    number: string | null;
    neighborhood: string | null;
    city: string | null;
    state: string | null;
    zip_code: string | null;
  };
}
export interface InstallmentsReply {
  installments: InstallmentView[];
  /**
   * The payment slip id exactly as the ERP sent it with the first charge that carried it, whatever
   * spelling was asked (absent from an older receivables-svc, or when no charge carries it).
   */
  payment_slip_id?: string;
  /** The beneficiary of the installments' provider account (null: accepted before accounts existed). */
  payee: Beneficiary | null;
}

/** booklet-svc -> gateway: who the tenant is (the payee printed on a booklet). */
export interface TenantProfileCommand {
  tenant_id: string;
}
export interface TenantProfileReply {
  name: string;
}

/** gateway -> booklet-svc: the PDF behind a (verified) download link. */
export interface BookletDownloadCommand {
  booklet_id: string;
}
export interface BookletDownloadReply {
  payment_slip_id: string;
  pdf_base64: string;
}

/** Gateway path of signed booklet downloads: `${BOOKLET_DOWNLOAD_PATH}/{booklet_id}?expires=..&signature=..`. */
export const BOOKLET_DOWNLOAD_PATH = '/api/v1/bank-slip-booklet/downloads';
