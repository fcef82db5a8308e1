import type { Beneficiary, ProviderKind } from '@payments/contracts';

/**
 * What the receivables domain needs from the outside world, as interfaces: the payment providers
 * (banks: one adapter per provider kind, each call made for one tenant's provider account) and the
 * directory of clients (clients-svc).
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
  /** The tenant's clients among these ids, keyed by the id in lower case; absent ids are not registered. */
  find(tenantId: string, clientIds: string[]): Promise<Map<string, Payer>>;
}

export type ChargeKind = 'hybrid_slip' | 'pix';

/**
 * A tenant's provider account (one immutable version of it), as the domain sees it. The credentials
 * stay sealed here: only the adapter that calls the bank opens them.
 */
export interface ProviderAccount {
  id: string;
  tenantId: string;
  provider: ProviderKind;
  /** The bank account this version reaches: versions with one key share the newest credentials. */
  accountKey: string;
  beneficiary: Beneficiary;
  /** The provider's API root for this account; null: the adapter's configured default. */
  baseUrl: string | null;
  sealedCredentials: string | null;
}

/** Where receivables find the provider account they were accepted under (versions are immutable: cacheable). */
export interface ProviderAccounts {
  /**
   * The account of a receivable: its stored version, or for `null` (accepted before accounts existed)
   * the legacy sandbox account, which registers with the sandbox's own default payee.
   */
  forReceivable(accountId: string | null): Promise<ProviderAccount>;
  /** A stored account version, or null when no receivable was ever accepted under it. */
  find(accountId: string): Promise<ProviderAccount | null>;
}

/**
 * The slip PDF and QR code image links handed to the ERP for a registered charge: the bank's own, or,
 * where the bank serves the PDF only behind its own authentication and no QR image (Inter), signed
 * gateway links that fetch the PDF through us and draw the QR code from the PIX copy-and-paste.
 */
export interface SlipLinks {
  forPdf(account: ProviderAccount, receivable: { id: string; dueDate: string }, bankPdfUrl: string): string;
  forQrCode(account: ProviderAccount, receivable: { id: string; dueDate: string }, bankQrCodeUrl: string): string;
}

export interface ChargeRequest {
  /** Our receivable id: the provider creates one charge per key, however often we ask. */
  idempotencyKey: string;
  /** The provider's id for this charge when an earlier attempt learnt it (consult it, do not issue again). */
  providerChargeId: string | null;
  /**
   * When an earlier attempt marked this charge as about to be created (the durable registration mark,
   * written before the first create is sent), whatever process, message copy or redrive made it; null
   * when this attempt wrote the mark (no create was ever sent). Not null: a create may have reached the
   * bank, so the provider looks the charge up before creating it.
   */
  createMarkedAt: Date | null;
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

/**
 * `rejected` only when nothing can be live at the provider; `chargeId` when the provider
 * named the charge it refused or failed to issue (kept on the row: a late notice about it still finds it).
 */
export type RegistrationOutcome =
  | { kind: 'registered'; charge: ProviderCharge }
  | { kind: 'rejected'; code: string; message: string; chargeId?: string };
/**
 * `not_open`: the charge was paid at the provider first. `refused`: the provider permanently refuses
 * to cancel it (400, 404, 422 and its documented refusals), so asking again cannot help;
 * the cancellation ends with an error callback and the charge stays as it is.
 */
export type CancellationOutcome = 'cancelled' | 'not_open' | 'refused';

/** The provider could not be reached or failed (5xx, timeout): the operation may be retried later. */
export class ProviderUnavailableError extends Error {
  override readonly name = 'ProviderUnavailableError';
}

/**
 * One outcome per request, in order; `unavailable` means that one charge may be tried again later
 * (with `chargeId` when the provider accepted the request but has not issued the charge yet: the next
 * attempt consults that charge instead of issuing another).
 */
export type BatchRegistrationOutcome = RegistrationOutcome | { kind: 'unavailable'; reason: string; chargeId?: string };

/** Where a charge stands at the provider, when we ask (to confirm a payment notice before acting on it). */
export type ProviderChargeState =
  | { kind: 'open' }
  | {
      kind: 'paid';
      payment: Omit<ProviderPayment, 'eventId' | 'chargeId'>;
      /**
       * The refunds (PIX: devoluções) the bank shows of the payment, when the consult tells them
       * (a PIX charge's cobv lists them under its pix); absent: this consult cannot say.
       */
      refunds?: ProviderRefund[];
    }
  | { kind: 'cancelled' }
  | { kind: 'unknown' };

/** One provider kind's adapter: every call names the account it is made for. */
export interface PaymentProvider {
  /** Registers charges (a bank's batch interface, or parallel single calls); throws ProviderUnavailableError when the provider cannot be reached at all. */
  registerMany(account: ProviderAccount, requests: ChargeRequest[]): Promise<BatchRegistrationOutcome[]>;
  cancel(account: ProviderAccount, chargeId: string, reason: string): Promise<CancellationOutcome>;
  /** The charge as the provider has it now; throws ProviderUnavailableError when it cannot be asked. */
  consult(account: ProviderAccount, chargeId: string): Promise<ProviderChargeState>;
  /** The slip PDF, for providers that serve it only behind their own authentication. */
  slipPdf(account: ProviderAccount, chargeId: string): Promise<Buffer>;
  /**
   * What identifies a charge at the provider before the provider names it (Inter: its seuNumero),
   * kept in the registration mark; absent: the receivable id itself.
   */
  bankReference?(receivableId: string): string;
  /** Reconciliation: the bank's lists of what changed (providers whose notices may be lost). */
  sweep?: SweepingProvider['sweep'];
}

/** The adapters by provider kind (one instance each; accounts are per call). */
export type PaymentProviders = Record<ProviderKind, PaymentProvider>;

/** A settled payment, as the provider reports it. */
export interface ProviderPayment {
  eventId: string;
  chargeId: string;
  paidAt: Date;
  /**
   * What the bank told of the payment's time: 'time' (an instant, e.g. a notice's dataHoraSituacao), or
   * 'date' (a list gives only the day: paidAt is that day at 00:00:00 Brasília time, the time unknown).
   * Absent: 'time'.
   */
  paidAtPrecision?: 'time' | 'date';
  amountPaidCents: number;
  feeCents: number;
  method: 'boleto' | 'pix' | 'manual';
}

/**
 * A refund of a charge's payment made at the bank (PIX: a devolução, made by the tenant in its bank's
 * app or API): shown in the charge's history, never changing its state or amount paid.
 */
export interface ProviderRefund {
  /** The bank's id of the refund (PIX: the devolução's id, unique within its payment). */
  id: string;
  amountCents: number;
  /** The bank's own word for where it stands (PIX: EM_PROCESSAMENTO, DEVOLVIDO, NAO_REALIZADO). */
  status: string;
  at: Date | null;
  /**
   * The bank has not settled it yet (PIX: EM_PROCESSAMENTO): it is written in the history only once
   * settled (returned or not done), so the history says how it ended.
   */
  inProcess?: boolean;
}

/**
 * What a bank notice (or a bank list, read by reconciliation) says happened to a charge; 'refunded':
 * a refund of its payment was made at the bank (the notice carries `refund`).
 */
export type BankNoticeKind = 'paid' | 'cancelled' | 'other' | 'refunded';

/**
 * A bank's word about one charge of an account: from its webhook (not proof: the charge is consulted
 * before it changes anything) or from its own lists read over the API by reconciliation (`verified`).
 */
export interface BankNotice {
  chargeId: string;
  kind: BankNoticeKind;
  /** The bank's own name for the charge's situation (Inter: RECEBIDO, CANCELADO, EXPIRADO ...), for the history. */
  situation: string;
  /** When the situation changed, as precise as the bank says (null: not said). */
  at: Date | null;
  atPrecision: 'time' | 'date';
  amountReceivedCents: number | null;
  method: ProviderPayment['method'] | null;
  /** Read from the bank's API itself (a list or its callback history): no consult needed to believe it. */
  verified: boolean;
  /** The refund a 'refunded' notice tells of (its amount is also amountReceivedCents). */
  refund?: ProviderRefund;
  /**
   * The receivable the charge id itself names, when it does (a PIX txid made from the receivable id):
   * a notice naming a receivable that is not of the account's bank account is not stored (another
   * system's charge at the same bank), rather than kept for ever as an unknown charge.
   */
  receivableId?: string;
}

/** The windows one reconciliation sweep of an account reads, in the bank's terms. */
export interface SweepWindow {
  /** Payment dates (Brasília calendar days, YYYY-MM-DD), both ends included. */
  paidFrom: string;
  paidTo: string;
  /** Due dates of the account's open charges: where cancelled and expired ones are looked for. */
  dueFrom: string;
  dueTo: string;
  /** The bank's webhook deliveries (callback history) sent in [callbacksFrom, callbacksTo]. */
  callbacksFrom: Date;
  callbacksTo: Date;
  /**
   * When the oldest open charge of the account was accepted (a bank charge is created after it): where
   * lists filtered by the charges' creation (PIX: GET /cobv) start. Absent: the payment window's start.
   */
  createdFrom?: Date;
}

/** What a sweep found (each finding applied as a notice would be), and the calls it took. */
export interface SweepResult {
  /** In the order found: the callback history's first (they carry the instant of each change). */
  notices: Array<BankNotice & { source: 'list' | 'history' }>;
  calls: number;
  /** False when a list was cut short (too many pages for one sweep): the window is read again next time. */
  complete: boolean;
  /** Lists that failed while the findings of others are still applied (complete is false), for the log. */
  problems?: string[];
}

/** A provider whose own lists can be swept for what its notices missed (reconciliation). */
export interface SweepingProvider {
  sweep(account: ProviderAccount, window: SweepWindow): Promise<SweepResult>;
}
