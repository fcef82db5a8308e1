import { PixAnswerError, readPixNotice, receivableIdOfTxid, REFUND_STATUS, type ReceivedPix } from '@payments/pix-api';
import type { BankNotice } from '../../../domain/ports';

/**
 * PIX notices: the bank (any PSP on the Central Bank's standard, Inter's PIX API too) was told
 * `<RECEIVABLES_PUBLIC_URL>/provider/webhooks/pix/{accountId}` and posts `{ "pix": [ ... ] }` to that
 * URL + `/pix`, one entry per PIX received (with its devoluções, when it has some) — docs/providers/pix.md.
 * The same reading serves reconciliation's received-PIX list (GET /pix), where the entries have one shape.
 */

/** Where the PIX API posts our notices (the account id and `/pix` follow). */
export const PIX_WEBHOOK_PATH = '/provider/webhooks/pix';

/** A body that is not the standard's PIX notice: answered 400, nothing is stored. */
export class InvalidPixWebhookError extends Error {
  override readonly name = 'InvalidPixWebhookError';
}

/** The situation a PIX charge's payment is written under (the cobv's status once paid, in the standard's words). */
export const PIX_PAID_SITUATION = 'CONCLUIDA';

/** Parses the body the bank posts: the notices of the entries that pay our charges (not proof: consulted first). */
export function parsePixWebhook(rawBody: string): BankNotice[] {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    throw new InvalidPixWebhookError('body is not JSON');
  }
  let received: ReceivedPix[];
  try {
    received = readPixNotice(body);
  } catch (err) {
    if (err instanceof PixAnswerError) throw new InvalidPixWebhookError(err.message);
    throw err;
  }
  return received.flatMap((pix) => pixNotices(pix, false));
}

/**
 * A received PIX as notices: its payment of our charge (the txid is the charge id) and one notice per
 * devolução. None for a PIX that pays no charge of ours: one without a txid (paid to the key itself),
 * or with a txid not made by txidFor — another system's charge, or the PIX payment of a boleto (whose
 * txid is the bank's own), which reaches us through the boleto's path under the boleto's id.
 * `verified`: read from the bank's API (its list), not posted to us.
 */
export function pixNotices(pix: ReceivedPix, verified: boolean): BankNotice[] {
  const { txid } = pix;
  const receivableId = txid === null ? null : receivableIdOfTxid(txid);
  if (txid === null || receivableId === null) return [];
  const paid: BankNotice = {
    chargeId: txid,
    kind: 'paid',
    situation: PIX_PAID_SITUATION,
    at: pix.at,
    atPrecision: 'time',
    amountReceivedCents: pix.amountCents,
    method: 'pix',
    verified,
    receivableId,
  };
  // A devolução still in process is told by the bank again when it settles (its notice, the next
  // list): the list's word, final once stored (one per devolução id), waits for that.
  const told = verified ? pix.refunds.filter((r) => r.status !== REFUND_STATUS.processing) : pix.refunds;
  const refunds = told.map((devolucao): BankNotice => {
    const refund = {
      id: devolucao.id,
      amountCents: devolucao.amountCents,
      status: devolucao.status,
      at: devolucao.at ?? devolucao.requestedAt,
      inProcess: devolucao.status === REFUND_STATUS.processing,
    };
    return {
      chargeId: txid,
      kind: 'refunded',
      situation: refund.status,
      at: refund.at,
      atPrecision: 'time',
      amountReceivedCents: refund.amountCents,
      method: 'pix',
      verified,
      refund,
      receivableId,
    };
  });
  return [paid, ...refunds];
}
