/**
 * What the receivables domain needs from the outside world, as interfaces: the payment provider
 * (a bank; the bank sandbox's HTTP adapter implements it, a real bank's adapter can replace it by
 * configuration) and the directory of clients (clients-svc).
 */
export interface Payer {
  clientId: string;
  name: string;
  taxId: string;
  address: string | null;
  number: string | null;
  neighborhood: string | null;
  city: string | null;
  state: string | null;
  zipCode: string | null;
  email: string | null;
}

export interface ClientDirectory {
  /** The tenant's clients among these ids; absent ids are not registered. */
  find(tenantId: string, clientIds: string[]): Promise<Map<string, Payer>>;
}

export type ChargeKind = 'hybrid_slip' | 'pix';

export interface ChargeRequest {
  /** Our receivable id: the provider creates one charge per key, however often we ask. */
  idempotencyKey: string;
  kind: ChargeKind;
  amountCents: number;
  issueDate: string;
  dueDate: string;
  payer: Payer;
  discount: { amountCents: number; until: string } | null;
  fineBp: number;
  interestPerDayCents: number;
  instructions: string[];
  descriptionLines: Array<{ description: string; quantity: number; priceCents: number }>;
  reference: string;
}

export interface ProviderCharge {
  chargeId: string;
  ourNumber: string;
  barcode: string | null;
  typeableLine: string | null;
  pixCopyAndPaste: string;
  qrcodeImageUrl: string;
  pdfUrl: string;
}

export type RegistrationOutcome =
  { kind: 'registered'; charge: ProviderCharge } | { kind: 'rejected'; code: string; message: string };
export type CancellationOutcome = 'cancelled' | 'not_open';

/** The provider could not be reached or failed (5xx, timeout): the operation may be retried later. */
export class ProviderUnavailableError extends Error {
  override readonly name = 'ProviderUnavailableError';
}

/** One outcome per request, in order; `unavailable` means that one charge may be tried again later. */
export type BatchRegistrationOutcome = RegistrationOutcome | { kind: 'unavailable'; reason: string };

export interface PaymentProvider {
  /** Registers charges (a bank's batch interface, or parallel single calls); throws ProviderUnavailableError when the provider cannot be reached at all. */
  registerMany(requests: ChargeRequest[]): Promise<BatchRegistrationOutcome[]>;
  cancel(chargeId: string): Promise<CancellationOutcome>;
}

/** A settled payment, as the provider reports it. */
export interface ProviderPayment {
  eventId: string;
  chargeId: string;
  paidAt: Date;
  amountPaidCents: number;
  feeCents: number;
  method: 'boleto' | 'pix' | 'manual';
}
