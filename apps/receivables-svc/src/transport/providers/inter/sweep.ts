import { Type, type Static } from '@sinclair/typebox';
import { INTER_PATHS, interViolations } from '@payments/inter-cobranca';
import type { BankNotice, SweepResult, SweepWindow } from '../../../domain/ports';
import type { InterAccountClient } from './client';
import { chargeState } from './mapping';
import { CallbackCharge, noticeOfCallback } from './webhook';

/**
 * Inter's own lists, read by reconciliation (Inter's API reference, developers.inter.co/references/
 * cobranca-bolepix): GET /cobrancas (dataInicial and dataFinal required; filtrarDataPor VENCIMENTO,
 * EMISSAO or PAGAMENTO; one situacao; pages of paginacao.itensPorPagina up to 1000, paginacao.paginaAtual
 * from 0; 120 calls a minute) and GET /cobrancas/webhook/callbacks (dataHoraInicio and dataHoraFim
 * required; pagina from 0; tamanhoPagina 10 to 50; 10 calls a minute).
 *
 * The callback history's payloads are applied directly as notices rather than asking Inter to send
 * them again (POST .../webhook/callbacks/retry, 5 calls a minute): read over our own authenticated
 * connection they are the bank's word already, and a retry would only post them, later, to the URL that
 * just failed, to come through the same store-and-apply path.
 */

export const CALLBACK_HISTORY_PATH = `${INTER_PATHS.charges}/webhook/callbacks`;

/** paginacao.itensPorPagina's maximum: the fewest calls per list. */
const LIST_PAGE_SIZE = 1_000;
/** tamanhoPagina's maximum. */
const HISTORY_PAGE_SIZE = 50;
/**
 * Pages read per list and sweep (20,000 charges): a sweep stays well inside 120 calls a minute, shared
 * with registrations. A list cut short is read again by the next sweep (its window is kept).
 */
const MAX_LIST_PAGES = 20;
/** Pages of callback history per sweep: half of its 10 calls a minute, whatever the window holds. */
const MAX_HISTORY_PAGES = 5;

/** One listed charge: only what reconciliation reads (the reference requires little more). */
const ListedCharge = Type.Object({
  cobranca: Type.Object({
    codigoSolicitacao: Type.String({ minLength: 1 }),
    seuNumero: Type.Optional(Type.String()),
    situacao: Type.String({ minLength: 1 }),
    dataSituacao: Type.Optional(Type.String()),
    dataVencimento: Type.Optional(Type.String()),
    valorNominal: Type.Union([Type.Number(), Type.String()]),
    valorTotalRecebido: Type.Optional(Type.Union([Type.Number(), Type.String()])),
    origemRecebimento: Type.Optional(Type.String()),
  }),
});

/** CobrancasResponse: only `cobrancas` is required by the reference. */
const ChargePage = Type.Object({
  cobrancas: Type.Array(ListedCharge),
  totalPaginas: Type.Optional(Type.Integer()),
  ultimaPagina: Type.Optional(Type.Boolean()),
});
type ChargePage = Static<typeof ChargePage>;

/** CallbackAttemptPage. The reference's example shows a payload object where its schema says an array: both are read. */
const CallbackAttemptPage = Type.Object({
  data: Type.Array(
    Type.Object({
      payload: Type.Unknown(),
      numeroTentativa: Type.Optional(Type.Integer()),
      dataHoraDisparo: Type.Optional(Type.String()),
      sucesso: Type.Optional(Type.Boolean()),
    }),
  ),
  totalPaginas: Type.Optional(Type.Integer()),
  ultimaPagina: Type.Optional(Type.Boolean()),
});
type CallbackAttemptPage = Static<typeof CallbackAttemptPage>;

/**
 * One sweep of an account: the callback history of the window first (its notices carry the instant of
 * each change), then the charges paid in the payment-date window, then the cancelled and expired ones
 * among the due dates of the open charges. A few calls whatever the number of open charges: never one
 * consult per charge.
 */
export async function sweepInter(client: InterAccountClient, window: SweepWindow): Promise<SweepResult> {
  const result: SweepResult = { notices: [], calls: 0, complete: true };
  await readHistory(client, window, result);
  await readList(client, result, {
    dataInicial: window.paidFrom,
    dataFinal: window.paidTo,
    filtrarDataPor: 'PAGAMENTO',
  });
  for (const situacao of ['CANCELADO', 'EXPIRADO'])
    await readList(client, result, {
      dataInicial: window.dueFrom,
      dataFinal: window.dueTo,
      filtrarDataPor: 'VENCIMENTO',
      situacao,
    });
  return result;
}

async function readList(client: InterAccountClient, result: SweepResult, filter: Record<string, string>) {
  for (let page = 0; ; page += 1) {
    if (page >= MAX_LIST_PAGES) {
      result.complete = false;
      return;
    }
    result.calls += 1;
    const answer = await client.callFor<ChargePage>(
      {
        method: 'GET',
        path: INTER_PATHS.charges,
        query: {
          ...filter,
          'paginacao.itensPorPagina': String(LIST_PAGE_SIZE),
          'paginacao.paginaAtual': String(page),
        },
        what: `list (${filter.filtrarDataPor}${filter.situacao ? ` ${filter.situacao}` : ''})`,
      },
      ChargePage,
    );
    for (const item of answer.cobrancas) {
      const notice = listedNotice(item);
      if (notice && (filter.situacao === undefined || item.cobranca.situacao === filter.situacao))
        result.notices.push({ ...notice, source: 'list' });
    }
    if (lastPage(answer, page, LIST_PAGE_SIZE, answer.cobrancas.length)) return;
  }
}

/** A listed charge as a notice, from the bank's API (verified); null when it is neither paid nor cancelled. */
function listedNotice(item: Static<typeof ListedCharge>): BankNotice | null {
  const charge = item.cobranca;
  const state = chargeState(item as Parameters<typeof chargeState>[0]);
  if (state.kind === 'paid')
    return {
      chargeId: charge.codigoSolicitacao,
      kind: 'paid',
      situation: charge.situacao,
      at: state.payment.paidAt,
      atPrecision: 'date',
      amountReceivedCents: state.payment.amountPaidCents,
      method: state.payment.method,
      // Without valorTotalRecebido the amount is not the bank's word: the charge is consulted.
      verified: charge.valorTotalRecebido !== undefined && charge.dataSituacao !== undefined,
    };
  if (state.kind === 'cancelled')
    return {
      chargeId: charge.codigoSolicitacao,
      kind: 'cancelled',
      situation: charge.situacao,
      at: charge.dataSituacao ? new Date(`${charge.dataSituacao}T00:00:00-03:00`) : null,
      atPrecision: 'date',
      amountReceivedCents: null,
      method: null,
      verified: true,
    };
  return null;
}

async function readHistory(client: InterAccountClient, window: SweepWindow, result: SweepResult) {
  for (let page = 0; ; page += 1) {
    if (page >= MAX_HISTORY_PAGES) {
      result.complete = false;
      return;
    }
    result.calls += 1;
    const answer = await client.callFor<CallbackAttemptPage>(
      {
        method: 'GET',
        path: CALLBACK_HISTORY_PATH,
        query: {
          dataHoraInicio: window.callbacksFrom.toISOString(),
          dataHoraFim: window.callbacksTo.toISOString(),
          pagina: String(page),
          tamanhoPagina: String(HISTORY_PAGE_SIZE),
        },
        what: 'callback history',
      },
      CallbackAttemptPage,
    );
    for (const attempt of answer.data) {
      const items = Array.isArray(attempt.payload) ? attempt.payload : [attempt.payload];
      for (const item of items) {
        // An item off the reference (the example's empty payload) carries nothing to apply.
        if (interViolations(CallbackCharge, item).length > 0) continue;
        const notice = noticeOfCallback(item as CallbackCharge, true);
        if (notice.kind !== 'other') result.notices.push({ ...notice, source: 'history' });
      }
    }
    if (lastPage(answer, page, HISTORY_PAGE_SIZE, answer.data.length)) return;
  }
}

/** The last page: as the answer says, or a page shorter than asked for. */
function lastPage(
  answer: { totalPaginas?: number; ultimaPagina?: boolean },
  page: number,
  size: number,
  count: number,
): boolean {
  if (answer.ultimaPagina !== undefined) return answer.ultimaPagina;
  if (answer.totalPaginas !== undefined) return page + 1 >= answer.totalPaginas;
  return count < size;
}
