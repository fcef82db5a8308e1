import type { ColumnType, Kysely, Selectable } from 'kysely';
import type { EmitirCobrancaRequestBody, OrigemRecebimento, SituacaoCobranca } from '../domain/inter/contract';
import type { BankSandboxDatabase } from './schema';

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
  /** null: the account has no PIX key, its boletos are issued without PIX (as at Inter). */
  pix_key: string | null;
}

export interface InterClientsTable {
  client_id: string;
  /**
   * SHA-256 of the client_secret: fixed for an integration (POST /sandbox/inter/integrations); for a
   * client_id the sandbox never issued, the first one presented (trusted on first use).
   */
  secret_sha256: string | null;
  /** Issued by POST /sandbox/inter/integrations. */
  integration: ColumnType<boolean, boolean | undefined, boolean>;
  /** An integration's certificate (SHA-256, as TLS reports it): its tokens are issued over that one only. */
  cert_fingerprint: string | null;
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
  request: Json<EmitirCobrancaRequestBody>;
  /** The payer's cpfCnpj: part of the 30-minute duplicate key. */
  payer_tax_id: string | null;
  amount_cents: BigIntColumn;
  due_date: string;
  /** Date the bank accepted it (dataEmissao), in Brasília. */
  issue_date: string;
  situacao: SituacaoCobranca;
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
  payment_origin: OrigemRecebimento | null;
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

/** One attempt to deliver a notice: a row of the webhook callback history. */
export interface InterNoticeAttemptsTable {
  attempt_id: string;
  notification_id: string;
  client_id: string;
  codigo_solicitacao: string;
  webhook_url: string;
  payload: string;
  attempt_number: number;
  fired_at: Date;
  success: boolean;
  http_status: number | null;
  error_message: string | null;
}

// A type alias, not an interface: Kysely's withTables wants an index-signature-compatible record.
export type InterTables = {
  inter_clients: InterClientsTable;
  inter_tokens: InterTokensTable;
  inter_charges: InterChargesTable;
  inter_notifications: InterNotificationsTable;
  inter_notice_attempts: InterNoticeAttemptsTable;
};

export type InterDatabase = BankSandboxDatabase & InterTables;
export type InterDb = Kysely<InterDatabase>;
export type InterChargeRow = Selectable<InterChargesTable>;
export type InterClientRow = Selectable<InterClientsTable>;
