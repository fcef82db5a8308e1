import type { PixDialect } from './dialects';
import { centsOf } from './money';
import { REFUND_STATUS, type CobvStatus, type RefundStatus } from './status';
import { standardViolations, type PixViolation } from './validate';

/** An answer of a PIX API that is not the standard's shape; `field` is the JSON pointer of the first wrong one. */
export class PixAnswerError extends Error {
  override readonly name = 'PixAnswerError';
  readonly field: string;
  constructor(
    readonly what: string,
    readonly violations: PixViolation[],
  ) {
    super(
      `${what} is not the PIX standard's shape: ${violations.map((v) => `${v.path || '/'} ${v.message}`).join('; ')}`,
    );
    this.field = violations[0]?.path ?? '';
  }
}

/** A devolução of a received PIX. */
export interface PixRefund {
  id: string;
  rtrId: string | null;
  amountCents: number;
  status: RefundStatus;
  requestedAt: Date | null;
  /** When it was settled; null while in process or when not done. */
  at: Date | null;
}

/** A PIX received at the bank: the payment of a charge (txid) or not. */
export interface ReceivedPix {
  endToEndId: string;
  txid: string | null;
  amountCents: number;
  at: Date;
  payerMessage: string | null;
  refunds: PixRefund[];
}

/** A cobv as the bank answers it (PUT, GET, PATCH /cobv/{txid}). */
export interface CobvView {
  txid: string;
  status: CobvStatus;
  revision: number;
  createdAt: Date;
  dueDate: string;
  daysPayableAfterDue: number;
  amountCents: number;
  /** The BR Code for its location; null when the bank gave none. */
  pixCopiaECola: string | null;
  /** The payload location (without scheme), null when none. */
  location: string | null;
  payments: ReceivedPix[];
  /** The devoluções of its payments, each with the payment it returns. */
  refunds: Array<PixRefund & { endToEndId: string }>;
}

export interface ReceivedPage {
  items: ReceivedPix[];
  /** The page read (0 first). */
  page: number;
  /** How many pages the query has. */
  pages: number;
}

/** The standard's problem answer (RFC 7807) of a refused request. */
export interface PixProblem {
  type: string;
  title: string;
  status: number;
  detail: string | null;
  violations: Array<{ reason: string | null; property: string | null; value: string | null }>;
}

interface WireRefund {
  id: string;
  rtrId?: string;
  valor: string;
  status: RefundStatus;
  horario?: { solicitacao?: string; liquidacao?: string };
}

interface WirePix {
  endToEndId: string;
  txid?: string;
  valor: string;
  horario: string;
  infoPagador?: string;
  devolucoes?: WireRefund[];
}

interface WireCobv {
  txid: string;
  status: CobvStatus;
  revisao: number;
  calendario: { criacao: string; dataDeVencimento: string; validadeAposVencimento: number };
  valor: { original: string };
  pixCopiaECola?: string;
  loc?: { location?: string };
  location?: string;
  pix?: WirePix[];
}

/** Reads the answer of PUT, GET or PATCH /cobv/{txid}. */
export function readCobv(body: unknown, _dialect: PixDialect): CobvView {
  const cobv = conforming<WireCobv>('CobVCompleta', body, 'the cobv');
  const payments = (cobv.pix ?? []).map(receivedOf);
  return {
    txid: cobv.txid,
    status: cobv.status,
    revision: cobv.revisao,
    createdAt: new Date(cobv.calendario.criacao),
    dueDate: cobv.calendario.dataDeVencimento,
    daysPayableAfterDue: cobv.calendario.validadeAposVencimento,
    amountCents: cents(cobv.valor.original),
    pixCopiaECola: cobv.pixCopiaECola ?? null,
    location: cobv.loc?.location ?? cobv.location ?? null,
    payments,
    refunds: payments.flatMap((pix) => pix.refunds.map((refund) => ({ ...refund, endToEndId: pix.endToEndId }))),
  };
}

/** Reads a page of GET /pix (PIX received between two instants). */
export function readReceivedPage(body: unknown, _dialect: PixDialect): ReceivedPage {
  const page = conforming<{
    parametros: { paginacao: { paginaAtual: number; quantidadeDePaginas: number } };
    pix?: WirePix[];
  }>('PixConsultados', body, 'the list of received PIX');
  return {
    items: (page.pix ?? []).map(receivedOf),
    page: page.parametros.paginacao.paginaAtual,
    pages: page.parametros.paginacao.quantidadeDePaginas,
  };
}

/** Reads the answer of GET /webhook/{chave}. */
export function readWebhook(body: unknown): { webhookUrl: string } {
  const webhook = conforming<{ webhookUrl: string }>('WebhookSolicitado', body, 'the webhook');
  return { webhookUrl: webhook.webhookUrl };
}

/**
 * Reads the body the bank POSTs to <webhookUrl>/pix: `{ pix: [...] }`, one entry a received PIX (a payment,
 * or a payment whose devolução reached a final status). A bare array of PIX is read the same: Inter's
 * reference shows its notices so (docs/providers/pix.md).
 */
export function readPixNotice(body: unknown): ReceivedPix[] {
  const list = Array.isArray(body) ? body : noticeList(body);
  const base = Array.isArray(body) ? '' : '/pix';
  return list.map((item, index) => {
    const violations = standardViolations('Pix', item);
    if (violations.length > 0) {
      throw new PixAnswerError(
        'the PIX notice',
        violations.map((v) => ({ ...v, path: `${base}/${index}${v.path}` })),
      );
    }
    return receivedOf(item as WirePix);
  });
}

/** Reads the answer of GET /pix/{e2eid}. */
export function readReceived(body: unknown): ReceivedPix {
  return receivedOf(conforming<WirePix>('Pix', body, 'the received PIX'));
}

/** Reads the answer of PUT or GET /pix/{e2eid}/devolucao/{id}. */
export function readRefund(body: unknown): PixRefund {
  return refundOf(conforming<WireRefund>('Devolucao', body, 'the devolução'));
}

function noticeList(body: unknown): unknown[] {
  const list = typeof body === 'object' && body !== null ? (body as { pix?: unknown }).pix : undefined;
  if (!Array.isArray(list)) {
    throw new PixAnswerError('the PIX notice', [{ path: '/pix', message: 'must be an array' }]);
  }
  return list;
}

/** Reads a refused request's body in the standard's problem shape, or null when it is not one. */
export function readProblem(body: unknown): PixProblem | null {
  if (standardViolations('Problema', body).length > 0) return null;
  const problem = body as {
    type: string;
    title: string;
    status: number;
    detail?: string;
    violacoes?: Array<{ razao?: string; propriedade?: string; valor?: string }>;
  };
  return {
    type: problem.type,
    title: problem.title,
    status: problem.status,
    detail: problem.detail ?? null,
    violations: (problem.violacoes ?? []).map((v) => ({
      reason: v.razao ?? null,
      property: v.propriedade ?? null,
      value: v.valor ?? null,
    })),
  };
}

function receivedOf(pix: WirePix): ReceivedPix {
  return {
    endToEndId: pix.endToEndId,
    txid: pix.txid ?? null,
    amountCents: cents(pix.valor),
    at: new Date(pix.horario),
    payerMessage: pix.infoPagador ?? null,
    refunds: (pix.devolucoes ?? []).map(refundOf),
  };
}

function refundOf(refund: WireRefund): PixRefund {
  const settled = refund.status === REFUND_STATUS.returned ? refund.horario?.liquidacao : undefined;
  return {
    id: refund.id,
    rtrId: refund.rtrId ?? null,
    amountCents: cents(refund.valor),
    status: refund.status,
    requestedAt: refund.horario?.solicitacao ? new Date(refund.horario.solicitacao) : null,
    at: settled ? new Date(settled) : null,
  };
}

function conforming<T>(schemaName: string, body: unknown, what: string): T {
  const violations = standardViolations(schemaName, body);
  if (violations.length > 0) throw new PixAnswerError(what, violations);
  return body as T;
}

// Decimal strings were checked by the schema's pattern; a failure here means the schema let through a shape
// our copy of the document should have refused.
function cents(decimal: string): number {
  const value = centsOf(decimal);
  if (value === null) throw new PixAnswerError('an amount', [{ path: '', message: `not a decimal: ${decimal}` }]);
  return value;
}
