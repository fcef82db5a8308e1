import { epochDay } from '../calendar-date';
import type {
  CallbackCobranca,
  CobrancaDetalhadaResponseBody,
  CobrancaResponse,
  Desconto,
  SituacaoCallback,
  SituacaoCobranca,
} from './contract';
import type { InterChargeRow } from '../../db/inter';
import { brasiliaClock } from './rules';

/** Today in Brasília (Inter's calendar), YYYY-MM-DD. */
export function brasiliaDate(instant: Date = new Date()): string {
  return brasiliaClock(instant).date;
}

/**
 * The situation a charge shows today: an open charge past its due date is ATRASADO, and past
 * numDiasAgenda days after it EXPIRADO (until the bank's clock records it, with its notice).
 */
export function effectiveSituation(row: InterChargeRow, today: string = brasiliaDate()): SituacaoCobranca {
  if (row.situacao !== 'A_RECEBER') return row.situacao;
  const daysLate = epochDay(today) - epochDay(row.due_date);
  if (daysLate > row.request.numDiasAgenda) return 'EXPIRADO';
  return daysLate > 0 ? 'ATRASADO' : 'A_RECEBER';
}

/** Cents as Inter writes received amounts: a decimal string with two places. */
export function reaisText(cents: number): string {
  return (cents / 100).toFixed(2);
}

function boletoOf(row: InterChargeRow): CobrancaDetalhadaResponseBody['boleto'] {
  return row.nosso_numero && row.barcode && row.typeable_line
    ? { nossoNumero: row.nosso_numero, codigoBarras: row.barcode, linhaDigitavel: row.typeable_line }
    : undefined;
}

function pixOf(row: InterChargeRow): CobrancaDetalhadaResponseBody['pix'] {
  return row.txid && row.pix_copy_and_paste ? { txid: row.txid, pixCopiaECola: row.pix_copy_and_paste } : undefined;
}

function settlement(row: InterChargeRow) {
  return {
    ...(row.amount_paid_cents !== null ? { valorTotalRecebido: reaisText(row.amount_paid_cents) } : {}),
    ...(row.payment_origin ? { origemRecebimento: row.payment_origin } : {}),
  };
}

/** GET /cobrancas/{codigoSolicitacao}: CobrancaDetalhadaResponseBody. */
export function chargeView(row: InterChargeRow, today: string = brasiliaDate()): CobrancaDetalhadaResponseBody {
  const situacao = effectiveSituation(row, today);
  const expiredToday = situacao === 'EXPIRADO' && row.situacao === 'A_RECEBER';
  const { request } = row;
  const boleto = boletoOf(row);
  const pix = pixOf(row);
  return {
    cobranca: {
      codigoSolicitacao: row.codigo_solicitacao,
      seuNumero: row.seu_numero,
      dataEmissao: row.issue_date,
      dataVencimento: row.due_date,
      valorNominal: request.valorNominal,
      tipoCobranca: 'SIMPLES',
      situacao,
      dataSituacao: expiredToday ? today : row.data_situacao,
      ...settlement(row),
      ...(row.cancel_reason ? { motivoCancelamento: row.cancel_reason } : {}),
      arquivada: false,
      ...(request.desconto ? { descontos: [request.desconto as Desconto] } : {}),
      ...(request.multa ? { multa: { ...request.multa } } : {}),
      ...(request.mora ? { mora: { ...request.mora } } : {}),
      pagador: request.pagador,
    },
    ...(boleto ? { boleto } : {}),
    ...(pix ? { pix } : {}),
  };
}

/** One item of GET /cobrancas (CobrancaResponse): the charge in short, valorNominal as a decimal string. */
export function listItem(row: InterChargeRow, today: string = brasiliaDate()): CobrancaResponse {
  const situacao = effectiveSituation(row, today);
  const boleto = boletoOf(row);
  const pix = pixOf(row);
  return {
    cobranca: {
      codigoSolicitacao: row.codigo_solicitacao,
      seuNumero: row.seu_numero,
      situacao,
      dataSituacao: situacao === 'EXPIRADO' && row.situacao === 'A_RECEBER' ? today : row.data_situacao,
      dataEmissao: row.issue_date,
      dataVencimento: row.due_date,
      valorNominal: reaisText(row.amount_cents),
      ...settlement(row),
      tipoCobranca: 'SIMPLES',
      pagador: { nome: row.request.pagador.nome, cpfCnpj: row.request.pagador.cpfCnpj },
    },
    ...(boleto ? { boleto } : {}),
    ...(pix ? { pix } : {}),
  };
}

/** One item of a notice (CallbackCobranca), for a charge that just became `situacao` at `at`. */
export function callbackItem(row: InterChargeRow, situacao: SituacaoCallback, at: Date): CallbackCobranca {
  const boleto = boletoOf(row);
  const pix = pixOf(row);
  return {
    codigoSolicitacao: row.codigo_solicitacao,
    seuNumero: row.seu_numero,
    situacao,
    dataHoraSituacao: at.toISOString(),
    ...settlement(row),
    ...(boleto ?? {}),
    ...(pix ?? {}),
  };
}
