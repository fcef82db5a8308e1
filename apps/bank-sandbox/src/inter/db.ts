import type { ColumnType, Kysely, Selectable } from 'kysely';
import type { CreateChargeRequest, InterPaymentOrigin, InterSituationName } from '@payments/inter-cobranca';
import type { BankSandboxDatabase } from '../db/schema';

/** The Inter dialect's tables (interDialectMigration), added to the sandbox's own. */

type Json<T> = ColumnType<T, string, string>;
type CreatedAt = ColumnType<Date, Date | undefined, never>;
/** bigint columns: @payments/db parses int8 as a number. */
type BigIntColumn = ColumnType<number, number | undefined, number>;

/** Who holds a client's account: printed as beneficiary on its slips and in its BR Codes. */
export interface AccountHolder {
  name: string;
  tax_id: string;
  city: string;
  pix_key: string;
}

export interface InterClientsTable {
  client_id: string;
  /** SHA-256 of the client_secret first presented (the sandbox trusts it on first use). */
  secret_sha256: string | null;
  account: string;
  next_our_number: BigIntColumn;
  holder: Json<AccountHolder | null>;
  webhook_url: string | null;
  webhook_created_at: Date | null;
  webhook_updated_at: Date | null;
  created_at: CreatedAt;
}

export interface InterTokensTable {
  token: string;
  client_id: string;
  cert_fingerprint: string;
  scopes: string;
  expires_at: Date;
}

export interface InterChargesTable {
  codigo_solicitacao: string;
  client_id: string;
  seu_numero: string;
  /** The create request as received (validated against the contract). */
  request: Json<CreateChargeRequest>;
  amount_cents: BigIntColumn;
  due_date: string;
  /** Date the bank accepted it (dataEmissao), in Brasília. */
  issue_date: string;
  situacao: InterSituationName;
  data_situacao: string;
  /** Planned to end in FALHA_EMISSAO (sandbox control). */
  fails_issue: boolean;
  /** When it leaves EM_PROCESSAMENTO (issued on the first look after that). */
  issue_at: Date;
  nosso_numero: string | null;
  barcode: string | null;
  typeable_line: string | null;
  txid: string | null;
  pix_copy_and_paste: string | null;
  cancel_reason: string | null;
  paid_at: Date | null;
  amount_paid_cents: BigIntColumn | null;
  payment_origin: InterPaymentOrigin | null;
  created_at: CreatedAt;
}

export interface InterNotificationsTable {
  notification_id: string;
  client_id: string;
  codigo_solicitacao: string;
  url: string;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempt_count: ColumnType<number, number | undefined, number>;
  next_attempt_at: Date | null;
  locked_until: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: CreatedAt;
  delivered_at: Date | null;
}

// A type alias, not an interface: Kysely's withTables wants an index-signature-compatible record.
export type InterTables = {
  inter_clients: InterClientsTable;
  inter_tokens: InterTokensTable;
  inter_charges: InterChargesTable;
  inter_notifications: InterNotificationsTable;
};

export type InterDatabase = BankSandboxDatabase & InterTables;
export type InterDb = Kysely<InterDatabase>;
export type InterChargeRow = Selectable<InterChargesTable>;
export type InterClientRow = Selectable<InterClientsTable>;
