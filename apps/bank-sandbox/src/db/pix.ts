import type { ColumnType, Kysely, Selectable } from 'kysely';
import type { InterDatabase } from './inter';

/** The PIX API's tables (pixDialectMigration), beside the Inter dialect's and the sandbox's own. */

type Json<T> = ColumnType<T, string, string>;
type CreatedAt = ColumnType<Date, Date | undefined, never>;
/** bigint columns: @payments/db parses int8 as a number. */
type BigIntColumn = ColumnType<number, number | undefined, number>;

export type CobvStatus = 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';
export type RefundStatus = 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';

/** A cobv body as the sandbox keeps it: what was sent, validated against the standard's CobVSolicitada. */
export interface CobvRequest {
  calendario: { dataDeVencimento: string; validadeAposVencimento?: number };
  devedor?: Record<string, string>;
  valor: CobvValor;
  chave: string;
  solicitacaoPagador?: string;
  infoAdicionais?: Array<{ nome: string; valor: string }>;
}

export interface CobvValor {
  original: string;
  multa?: { modalidade: number; valorPerc: string };
  juros?: { modalidade: number; valorPerc: string };
  abatimento?: { modalidade: number; valorPerc: string };
  desconto?: {
    modalidade: number;
    descontoDataFixa?: Array<{ data: string; valorPerc: string }>;
    valorPerc?: string;
  };
}

/** What a payment was made of, in cents (componentesValor). */
export interface AmountComponents {
  original: number;
  multa: number;
  juros: number;
  desconto: number;
  abatimento: number;
}

export interface PixCobvTable {
  txid: string;
  client_id: string;
  revision: number;
  status: CobvStatus;
  request: Json<CobvRequest>;
  revisions: Json<CobvRequest[]>;
  chave: string;
  due_date: string;
  days_payable_after_due: number;
  amount_cents: BigIntColumn;
  loc_id: BigIntColumn;
  /** The capability part of the location URL (its last path segment). */
  loc_token: string;
  /** The location as the BR Code carries it: host and path, no scheme. */
  location: string;
  pix_copy_and_paste: string;
  created_at: CreatedAt;
  loc_created_at: CreatedAt;
  status_changed_at: Date;
}

export interface PixReceivedTable {
  end_to_end_id: string;
  client_id: string;
  txid: string | null;
  chave: string;
  amount_cents: BigIntColumn;
  components: Json<AmountComponents>;
  info_pagador: string | null;
  paid_at: Date;
}

export interface PixRefundsTable {
  end_to_end_id: string;
  id: string;
  rtr_id: string;
  amount_cents: BigIntColumn;
  natureza: string;
  descricao: string | null;
  status: RefundStatus;
  requested_at: Date;
  settled_at: Date | null;
}

export interface PixWebhooksTable {
  client_id: string;
  chave: string;
  webhook_url: string;
  created_at: CreatedAt;
}

export interface PixNotificationsTable {
  notification_id: string;
  client_id: string;
  end_to_end_id: string;
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
export type PixTables = {
  pix_cobv: PixCobvTable;
  pix_received: PixReceivedTable;
  pix_refunds: PixRefundsTable;
  pix_webhooks: PixWebhooksTable;
  pix_notifications: PixNotificationsTable;
};

export type PixDatabase = InterDatabase & PixTables;
export type PixDb = Kysely<PixDatabase>;
export type CobvRow = Selectable<PixCobvTable>;
export type ReceivedRow = Selectable<PixReceivedTable>;
export type RefundRow = Selectable<PixRefundsTable>;
