import type { ColumnType, Generated, Selectable } from 'kysely';
import type { OutboxDatabase } from '@payments/outbox';
import type { Beneficiary, PaymentType, ProviderKind, ReceivableState } from '@payments/contracts';

/** Where a receivable stands with the provider, beside its business state. */
export type RegistrationStatus = 'queued' | 'registered' | 'rejected' | 'skipped';

/** Tables of schema `receivables`. Money is integer cents (BIGINT); dates are DATE; instants TIMESTAMPTZ. */
export interface ReceivablesTable {
  id: string;
  tenant_id: string;
  /** The ERP's ids as keys: uuids, so any spelling matches. */
  account_receivable_id: string;
  client_id: string;
  payment_slip_id: string;
  /** The same ids exactly as the ERP sent them when it created the charge: what answers and callbacks show. */
  account_receivable_id_as_sent: string;
  client_id_as_sent: string;
  payment_slip_id_as_sent: string;
  payment_method: number;
  url_callback: string;
  emission_date: ColumnType<string, string, string>;
  due_date: ColumnType<string, string, string>;
  amount_cents: number;
  discount_type: string;
  discount_cents: number | null;
  discount_until: ColumnType<string | null, string | null, string | null>;
  /** Late penalty in hundredths of a percent (2.5 % = 250). */
  fine_bp: number;
  interest_cents_per_day: number;
  items: ColumnType<unknown, string, string>;
  /** The payer as registered when the charge was issued (printed on the slip). */
  payer: ColumnType<unknown, string, string>;
  client_name: string;
  /** The provider account version it was accepted under; null: accepted before accounts existed (legacy sandbox). */
  provider_account_id: string | null;
  state: ReceivableState;
  registration_status: RegistrationStatus;
  provider_charge_id: string | null;
  our_number: string | null;
  barcode: string | null;
  typeable_line: string | null;
  pix_copy_and_paste: string | null;
  qrcode_image_url: string | null;
  pdf_url: string | null;
  rejection_code: string | null;
  rejection_message: string | null;
  payment_date: Date | null;
  amount_paid_cents: number | null;
  fee_cents: number | null;
  payment_type: PaymentType;
  cancel_requested_at: Date | null;
  /** How many cancellations were requested: part of the cancellation callback's event id. */
  cancellation_requests: number;
  /** When the provider registered the charge (null until then, and for charges registered before migration 0008). */
  registered_at: Date | null;
  /** Attempts the bank did not take while the charge waited to be registered (0012), its last answer and when. */
  registration_attempts: Generated<number>;
  registration_last_error: string | null;
  registration_last_attempt_at: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface StateHistoryTable {
  id: Generated<string>;
  receivable_id: string;
  tenant_id: string;
  from_state: ReceivableState | null;
  to_state: ReceivableState;
  reason: string;
  at: Generated<Date>;
}

/** Charges by state as of the last fold (domain/state-counts.ts); state_count_changes holds what came since. */
export interface StateCountsTable {
  state: ReceivableState;
  count: ColumnType<string, number, number>;
}

/** A change of the count of a state (+n, -n), appended by the triggers on receivables, folded and deleted. */
export interface StateCountChangesTable {
  state: ReceivableState;
  delta: ColumnType<string, number, never>;
}

/** Provider notifications already applied (the provider retries; each counts once). */
export interface ProviderEventsTable {
  event_id: string;
  /** The account the event was about; null for a legacy sandbox charge. */
  provider_account_id: string | null;
  received_at: Generated<Date>;
}

/** A payment the provider reported for a charge it had cancelled or rejected: kept for a refund decision. */
export interface PaymentsNeedingRefundTable {
  /** The provider event that reported it (also in provider_events). */
  event_id: string;
  receivable_id: string;
  tenant_id: string;
  provider_account_id: string | null;
  provider_charge_id: string;
  /** The charge's state when the payment arrived; it stays so. */
  charge_state: 'cancelled' | 'rejected';
  paid_at: Date;
  amount_paid_cents: number;
  fee_cents: number;
  payment_type: 'boleto' | 'pix' | 'manual';
  recorded_at: Generated<Date>;
}

/** Provider account versions as the gateway handed them over with create commands (immutable). */
export interface ProviderAccountsTable {
  id: string;
  tenant_id: string;
  provider: ProviderKind;
  /** ProviderAccountVersion.account_key: the same bank account across versions. */
  account_key: string;
  beneficiary: ColumnType<Beneficiary, string, never>;
  base_url: string | null;
  /** Sealed with CREDENTIALS_ENCRYPTION_KEY, bound to the id; opened only by src/transport/providers/credentials.ts. */
  sealed_credentials: string | null;
  first_seen_at: Generated<Date>;
}

/** Registration outcomes per tenant and minute (UTC minute start), kept 8 days: the admin API's statistics. */
export interface RegistrationsPerMinuteTable {
  minute: Date;
  tenant_id: string;
  registered: number;
  failed: number;
}

/** Where a stored notice came from: the bank's webhook, its lists or callback history (reconciliation), or a cancel the bank refused as paid. */
export type NoticeSource = 'webhook' | 'list' | 'history' | 'cancel';

/**
 * A bank's notice (or a reconciliation finding), stored before it is answered and applied by a worker.
 * bank_notices is the queue (notices not applied yet); bank_notice_log holds every notice, with the
 * same columns, by month, its outcome mirrored from the queue (migration 0019).
 */
export interface BankNoticesTable {
  id: Generated<string>;
  /** The account version whose webhook URL received it (or that reconciliation swept). */
  provider_account_id: string;
  tenant_id: string;
  /** The bank account (ProviderAccountVersion.account_key) the charge belongs to. */
  account_key: string;
  charge_id: string;
  kind: 'paid' | 'cancelled' | 'other' | 'refunded';
  /** The bank's own name for the situation (Inter: RECEBIDO, CANCELADO, EXPIRADO ...; a refund's status). */
  situation: string;
  situation_at: Date | null;
  situation_at_precision: 'time' | 'date';
  amount_received_cents: number | null;
  payment_method: 'boleto' | 'pix' | 'manual' | null;
  source: NoticeSource;
  /** Read from the bank's API (reconciliation): believed without a consult. */
  verified: boolean;
  /** Reconciliation's findings: one per bank account, charge and kind (and refund). Null for webhook notices. */
  dedup_key: string | null;
  /** A 'refunded' notice's refund: the bank's id of it (PIX: the devolução id); its amount is amount_received_cents. */
  refund_id: string | null;
  received_at: Generated<Date>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  applied_at: Date | null;
  outcome: string | null;
  last_error: string | null;
}

/** A reconciliation finding's dedup key, kept after its notice left the queue: stored once per key. */
export interface BankNoticeKeysTable {
  tenant_id: string;
  account_key: string;
  dedup_key: string;
  received_at: Date;
}

/** Per bank account swept by reconciliation: the lease one instance holds while sweeping, and how far it got. */
export interface ReconciliationAccountsTable {
  tenant_id: string;
  account_key: string;
  holder: string | null;
  leased_until: Generated<Date>;
  last_complete_at: Date | null;
  callbacks_until: Date | null;
}

/** Written before the first create of a charge is sent: later attempts look the charge up first. */
export interface RegistrationMarksTable {
  receivable_id: string;
  provider_account_id: string | null;
  /** What identifies the charge at the bank before the bank names it (Inter: seuNumero). */
  bank_reference: string;
  marked_at: Generated<Date>;
}

/** A token bucket per bank account and endpoint: the bank's per-minute limit shared by every instance. */
export interface CallBudgetsTable {
  bucket: string;
  endpoint: string;
  tokens: number;
  refreshed_at: Date;
  blocked_until: Generated<Date>;
}

/** One OAuth token per bank account, shared by every instance (sealed with the credentials keyring). */
export interface BankTokensTable {
  bank_account: string;
  sealed_token: string | null;
  /** SHA-256 of the token: a 401 drops the token that failed, never a newer one. */
  token_digest: string | null;
  usable_until: Date | null;
  /** Until when one instance holds the lease to ask the bank for a new token (the others wait for it). */
  refreshing_until: Date | null;
}

export interface ReceivablesDatabase extends OutboxDatabase {
  registration_marks: RegistrationMarksTable;
  call_budgets: CallBudgetsTable;
  bank_tokens: BankTokensTable;
  bank_notices: BankNoticesTable;
  bank_notice_log: BankNoticesTable;
  bank_notice_keys: BankNoticeKeysTable;
  reconciliation_accounts: ReconciliationAccountsTable;
  receivables: ReceivablesTable;
  state_history: StateHistoryTable;
  state_counts: StateCountsTable;
  state_count_changes: StateCountChangesTable;
  provider_events: ProviderEventsTable;
  provider_accounts: ProviderAccountsTable;
  payments_needing_refund: PaymentsNeedingRefundTable;
  registrations_per_minute: RegistrationsPerMinuteTable;
}

export type ReceivableRow = Selectable<ReceivablesTable>;
