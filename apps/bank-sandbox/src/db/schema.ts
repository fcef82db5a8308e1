import type { ColumnType, Selectable } from 'kysely';
import type { Beneficiary, ChargeKind, ChargeStatus, DescriptionLine, Discount, Payer } from '../domain/charge';
import type { SettlementMethod } from '../domain/money';

/** Tables of schema `bank_sandbox`: the charges the bank registered, and its outgoing payment webhooks. */

/** jsonb columns: written as JSON text, read back parsed by pg. */
type Json<T> = ColumnType<T, string, string>;
type CreatedAt = ColumnType<Date, Date | undefined, never>;

export interface ChargesTable {
  charge_id: string;
  /** 11 digits from sequence our_number_seq: unique across the whole sandbox, whatever the beneficiary. */
  our_number: string;
  /** The Idempotency-Key of the request that registered it, and a fingerprint of that request's body. */
  idempotency_key: string;
  request_fingerprint: string;
  kind: ChargeKind;
  status: ChargeStatus;
  amount_cents: number;
  /** Calendar dates YYYY-MM-DD, kept as text: no time of day, no time zone to shift them. */
  issue_date: string;
  due_date: string;
  payer: Json<Payer>;
  discount: Json<Discount | null>;
  fine_percent_bp: number;
  interest_per_day_cents: number;
  instructions: Json<string[]>;
  description_lines: Json<DescriptionLine[]>;
  reference: string | null;
  barcode: string | null;
  typeable_line: string | null;
  pix_copy_and_paste: string;
  created_at: CreatedAt;
  cancelled_at: Date | null;
  paid_at: Date | null;
  amount_paid_cents: number | null;
  fee_cents: number | null;
  payment_method: SettlementMethod | null;
  /** Who the charge pays; null = the sandbox's configured payee. */
  beneficiary: ColumnType<Beneficiary | null, string | null | undefined, string | null>;
  /** The caller's account id, echoed in the payment webhook. */
  account_reference: ColumnType<string | null, string | null | undefined, string | null>;
}

export type NotificationStatus = 'pending' | 'delivered' | 'failed';

export interface NotificationsTable {
  /** Sent as webhook-id, the same on every attempt. */
  event_id: string;
  charge_id: string;
  event_type: string;
  /** The exact JSON sent (and signed) on every attempt. */
  body: string;
  status: NotificationStatus;
  attempt_count: ColumnType<number, number | undefined, number>;
  next_attempt_at: Date | null;
  /** Set while a delivery is in flight, so a slow attempt is not started twice. */
  locked_until: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: CreatedAt;
  delivered_at: Date | null;
  /** Trace context of the payment that caused it (W3C headers): its delivery continues that trace. */
  trace_context: ColumnType<Record<string, string> | null, string | null | undefined, string | null>;
}

export interface BankSandboxDatabase {
  charges: ChargesTable;
  notifications: NotificationsTable;
}

export type ChargeRow = Selectable<ChargesTable>;
export type NotificationRow = Selectable<NotificationsTable>;
