import type { PixDialect } from './dialects';

// Paths of the operations we use, relative to a dialect's API root (PixDialect.apiRoot).
// Path parameters are encoded here so no caller can forget it (a PIX key may be an e-mail or a phone "+55...").

const seg = encodeURIComponent;

export const PIX_PATHS = {
  /** PUT (create), GET (consult), PATCH (revise, cancel) one cobv. */
  cobv: (txid: string): string => `/cobv/${seg(txid)}`,
  /** GET the cobvs created between `inicio` and `fim` (query), paged. */
  cobvList: '/cobv',
  /** PUT, GET, DELETE the webhook of a PIX key (pass it through PixDialect.webhookKey). */
  webhook: (chave: string): string => `/webhook/${seg(chave)}`,
  /** GET the PIX received between `inicio` and `fim` (query), paged. */
  received: '/pix',
  /** GET one received PIX by its end-to-end id. */
  receivedOne: (e2eid: string): string => `/pix/${seg(e2eid)}`,
  /** PUT (ask for) and GET a devolução of a received PIX. */
  refund: (e2eid: string, id: string): string => `/pix/${seg(e2eid)}/devolucao/${seg(id)}`,
} as const;

/** The query of a paged list (GET /pix, GET /cobv): RFC 3339 instants and the page wanted (0 first). */
export function listQuery(from: Date, to: Date, page = 0, extra: Record<string, string> = {}): URLSearchParams {
  const query = new URLSearchParams({ inicio: from.toISOString(), fim: to.toISOString(), ...extra });
  if (page > 0) query.set('paginacao.paginaAtual', String(page));
  return query;
}

/** The query of GET /pix for a period, a page and optionally one txid, in the dialect's names. */
export function receivedQuery(
  dialect: PixDialect,
  range: { from: Date; to: Date; page?: number; txid?: string },
): URLSearchParams {
  const extra: Record<string, string> = range.txid ? { [dialect.receivedTxidParam]: range.txid } : {};
  return listQuery(range.from, range.to, range.page ?? 0, extra);
}
