import type { ChargeView, InterSituationName, WebhookItem } from '@payments/inter-cobranca';
import { epochDay } from '../domain/calendar-date';
import type { InterChargeRow } from './db';

/** Today in Brasília (Inter's calendar), YYYY-MM-DD. */
export function brasiliaDate(instant: Date = new Date()): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: 'America/Sao_Paulo',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(instant);
}

/**
 * The situation a charge shows today: an open charge past its due date is ATRASADO, and past
 * numDiasAgenda days after it EXPIRADO (Inter cancels it), without anything stored changing.
 */
export function effectiveSituation(row: InterChargeRow, today: string = brasiliaDate()): InterSituationName {
  if (row.situacao !== 'A_RECEBER') return row.situacao;
  const daysLate = epochDay(today) - epochDay(row.due_date);
  if (daysLate > row.request.numDiasAgenda) return 'EXPIRADO';
  return daysLate > 0 ? 'ATRASADO' : 'A_RECEBER';
}

/** Cents as Inter writes received amounts: a decimal string with two places. */
export function reaisText(cents: number): string {
  return (cents / 100).toFixed(2);
}

/** GET /cobranca/v3/cobrancas/{codigoSolicitacao}: the charge, and its slip and PIX data once issued. */
export function chargeView(row: InterChargeRow, today: string = brasiliaDate()): ChargeView {
  const situacao = effectiveSituation(row, today);
  const expiredToday = situacao === 'EXPIRADO' && row.situacao === 'A_RECEBER';
  const view: ChargeView = {
    cobranca: {
      codigoSolicitacao: row.codigo_solicitacao,
      seuNumero: row.seu_numero,
      dataEmissao: row.issue_date,
      dataVencimento: row.due_date,
      valorNominal: row.request.valorNominal,
      tipoCobranca: 'SIMPLES',
      situacao,
      dataSituacao: expiredToday ? today : row.data_situacao,
      arquivada: false,
      ...(row.amount_paid_cents !== null ? { valorTotalRecebido: reaisText(row.amount_paid_cents) } : {}),
      ...(row.payment_origin ? { origemRecebimento: row.payment_origin } : {}),
      ...(row.cancel_reason ? { motivoCancelamento: row.cancel_reason } : {}),
    },
  };
  if (row.nosso_numero && row.barcode && row.typeable_line)
    view.boleto = { nossoNumero: row.nosso_numero, codigoBarras: row.barcode, linhaDigitavel: row.typeable_line };
  if (row.txid && row.pix_copy_and_paste) view.pix = { txid: row.txid, pixCopiaECola: row.pix_copy_and_paste };
  return view;
}

/** One item of the webhook POST body, for a charge that just changed situation. */
export function webhookItem(row: InterChargeRow, at: Date): WebhookItem {
  const view = chargeView(row);
  return {
    codigoSolicitacao: row.codigo_solicitacao,
    seuNumero: row.seu_numero,
    situacao: view.cobranca.situacao,
    dataHoraSituacao: at.toISOString(),
    ...(view.cobranca.valorTotalRecebido !== undefined ? { valorTotalRecebido: view.cobranca.valorTotalRecebido } : {}),
    ...(view.cobranca.origemRecebimento ? { origemRecebimento: view.cobranca.origemRecebimento } : {}),
    ...(view.boleto ?? {}),
    ...(view.pix ?? {}),
  };
}
