import {
  COBV_STATUS,
  PIX_PATHS,
  PixAnswerError,
  listQuery,
  readCobv,
  readReceivedPage,
  receivableIdOfTxid,
  standardViolations,
  type PixDialect,
} from '@payments/pix-api';
import type { BankNotice, SweepResult, SweepWindow } from '../../../domain/ports';
import { pixNotices } from './webhook';

/**
 * Reconciliation of PIX charges through the standard's own lists (docs/providers/pix.md): the PIX
 * received in the payment window (GET /pix?inicio&fim, paged), each paying one of our cobvs (its txid
 * made by txidFor) a verified payment, each of its devoluções a verified refund; and the cobvs the bank
 * removed (GET /cobv?inicio&fim&status, by creation since the oldest open charge), cancelled here. The
 * received list holds the PIX payments of boletos too (Inter's boleto with PIX): their txid is the
 * bank's, not ours, so they are left to the boleto's own path (Inter's lists), which applies them under
 * the boleto's id. Each payment so counts once, on its own charge.
 */

/** What the sweep needs from an account's PIX API connection (its OAuth2 token, mutual TLS, budgets). */
export interface PixApiReader {
  /** The account's dialect (Inter's or the standard's), for reading answers. */
  readonly dialect: PixDialect;
  /**
   * GET `path` (PIX_PATHS, under the account's API root) with `query`; the 2xx answer's body. Throws
   * (ProviderUnavailableError or its own) when the bank cannot be asked or refuses.
   */
  get(path: string, query: Record<string, string>, what: string): Promise<unknown>;
}

/** paginacao.itensPorPagina's maximum in the standard: the fewest calls per list. */
const PAGE_SIZE = 1_000;
/**
 * Pages read per list and sweep (20,000 PIX): a sweep stays well inside a bank's per-minute limits, shared
 * with registrations. A list cut short (complete: false) is read again by the next sweep.
 */
export const MAX_PIX_LIST_PAGES = 20;

/** The statuses of a cobv the bank removed: by the PSP (expired after its validity) or by the tenant at the bank. */
const REMOVED = [COBV_STATUS.removedByPsp, COBV_STATUS.removedByReceiver] as const;

/**
 * One sweep of an account's PIX charges: the received PIX first (payments and devoluções), then the
 * removed cobvs. A failed list of removed cobvs does not lose the payments found before it: the sweep
 * answers them with complete=false and the failure in `problems`; a failed received list throws.
 */
export async function sweepPix(api: PixApiReader, window: SweepWindow): Promise<SweepResult> {
  const result: SweepResult = { notices: [], calls: 0, complete: true };
  const to = window.callbacksTo; // the sweep's "now"
  const paidFrom = brasiliaMidnight(window.paidFrom);
  await readReceived(api, result, paidFrom, to);
  const createdFrom = window.createdFrom && window.createdFrom < paidFrom ? window.createdFrom : paidFrom;
  for (const status of REMOVED) {
    try {
      await readRemoved(api, result, createdFrom, to, status);
    } catch (err) {
      result.complete = false;
      result.problems = [
        ...(result.problems ?? []),
        `GET /cobv (${status}): ${err instanceof Error ? err.message : String(err)}`,
      ];
    }
  }
  return result;
}

/** 00:00 of a Brasília calendar day (UTC-3 all year since 2019), the instant the bank's day starts. */
export function brasiliaMidnight(day: string): Date {
  return new Date(`${day}T00:00:00-03:00`);
}

async function readReceived(api: PixApiReader, result: SweepResult, from: Date, to: Date): Promise<void> {
  await readPages(result, async (page) => {
    const answer = readReceivedPage(
      await api.get(PIX_PATHS.received, query(from, to, page), 'received PIX list'),
      api.dialect,
    );
    for (const pix of answer.items)
      for (const notice of pixNotices(pix, true)) result.notices.push({ ...notice, source: 'list' });
    return answer.pages;
  });
}

async function readRemoved(
  api: PixApiReader,
  result: SweepResult,
  from: Date,
  to: Date,
  status: (typeof REMOVED)[number],
): Promise<void> {
  await readPages(result, async (page) => {
    const body = await api.get(PIX_PATHS.cobvList, query(from, to, page, { status }), `cobv list (${status})`);
    const violations = standardViolations('CobsVConsultadas', body);
    if (violations.length > 0) throw new PixAnswerError(`the cobv list (${status})`, violations);
    const answer = body as { parametros: { paginacao: { quantidadeDePaginas: number } }; cobs: unknown[] };
    for (const item of answer.cobs) {
      const cobv = readCobv(item, api.dialect);
      const notice = removedNotice(cobv.txid, cobv.status, status);
      if (notice) result.notices.push({ ...notice, source: 'list' });
    }
    return answer.parametros.paginacao.quantidadeDePaginas;
  });
}

/** A removed cobv of ours as a verified cancellation (the bank's list says so); null for any other. */
function removedNotice(txid: string, status: string, asked: string): BankNotice | null {
  const receivableId = receivableIdOfTxid(txid);
  // A PSP that ignores the status filter lists others too: only what was asked for is a finding.
  if (receivableId === null || status !== asked) return null;
  return {
    chargeId: txid,
    kind: 'cancelled',
    situation: status,
    at: null,
    atPrecision: 'date',
    amountReceivedCents: null,
    method: null,
    verified: true,
    receivableId,
  };
}

/** Reads pages 0, 1, ... while the answer says more follow, up to MAX_PIX_LIST_PAGES (then: incomplete). */
async function readPages(result: SweepResult, readPage: (page: number) => Promise<number>): Promise<void> {
  for (let page = 0; ; page += 1) {
    if (page >= MAX_PIX_LIST_PAGES) {
      result.complete = false;
      return;
    }
    result.calls += 1;
    const pages = await readPage(page);
    if (page + 1 >= pages) return;
  }
}

function query(from: Date, to: Date, page: number, extra: Record<string, string> = {}): Record<string, string> {
  const params = listQuery(from, to, page, { 'paginacao.itensPorPagina': String(PAGE_SIZE), ...extra });
  params.set('paginacao.paginaAtual', String(page));
  return Object.fromEntries(params);
}
