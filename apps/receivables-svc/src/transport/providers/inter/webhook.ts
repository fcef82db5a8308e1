import { Type, type Static } from '@sinclair/typebox';
import { INTER_SITUATIONS, interViolations } from '@payments/inter-cobranca';
import type { BankNotice, BankNoticeKind } from '../../../domain/ports';
import { paymentMethod, reaisToCents } from './mapping';

/** A body that is not Inter's charge notification: answered 400, nothing changes. */
export class InvalidInterWebhookError extends Error {
  override readonly name = 'InvalidInterWebhookError';
}

/**
 * One item of Inter's charge callback (CallbackCobranca in Inter's API reference,
 * developers.inter.co/references/cobranca-bolepix): codigoSolicitacao, situacao and dataHoraSituacao
 * are required; the rest is optional. Open: Inter may add fields.
 */
export const CallbackCharge = Type.Object({
  codigoSolicitacao: Type.String({ minLength: 1 }),
  situacao: Type.Unsafe<(typeof INTER_SITUATIONS)[number]>({ type: 'string', enum: [...INTER_SITUATIONS] }),
  dataHoraSituacao: Type.String({ minLength: 10 }),
  seuNumero: Type.Optional(Type.String()),
  valorTotalRecebido: Type.Optional(
    Type.Union([Type.Number({ minimum: 0 }), Type.String({ pattern: '^\\d+(\\.\\d{1,2})?$' })]),
  ),
  origemRecebimento: Type.Optional(Type.String()),
  nossoNumero: Type.Optional(Type.String()),
});
export type CallbackCharge = Static<typeof CallbackCharge>;

/** The webhook POST body: a JSON array of callbacks. */
const CallbackBody = Type.Array(CallbackCharge, { minItems: 1 });

/** A charge update from Inter's webhook, before it is confirmed (the body is not proof: the bank is asked). */
export type InterNotice = BankNotice & {
  /** Inter's nossoNumero, when the notice carries it (unique per account only). */
  ourNumber: string | null;
};

/** Parses the body Inter posts to the webhook URL: a JSON array of charge updates (a lone object is taken as one). */
export function parseInterWebhook(rawBody: string): InterNotice[] {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    throw new InvalidInterWebhookError('body is not JSON');
  }
  const items = Array.isArray(body) ? body : [body];
  const violations = interViolations(CallbackBody, items);
  if (violations.length > 0)
    throw new InvalidInterWebhookError(
      `not an Inter charge notification: ${violations
        .slice(0, 5)
        .map((v) => `${v.path || '/'} ${v.message}`)
        .join('; ')}`,
    );
  return (items as CallbackCharge[]).map((item) => ({
    ...noticeOfCallback(item, false),
    ourNumber: item.nossoNumero ?? null,
  }));
}

/** What Inter's situation means here: paid, cancelled (cancelled or expired at the bank), or nothing to apply. */
export function noticeKind(situacao: string): BankNoticeKind {
  if (situacao === 'RECEBIDO' || situacao === 'MARCADO_RECEBIDO') return 'paid';
  if (situacao === 'CANCELADO' || situacao === 'EXPIRADO') return 'cancelled';
  return 'other';
}

/**
 * A callback as a notice: its instant (dataHoraSituacao), amount received and how it was paid.
 * `verified`: read from Inter's API itself (its callback history), not posted to us.
 */
export function noticeOfCallback(item: CallbackCharge, verified: boolean): BankNotice {
  const kind = noticeKind(item.situacao);
  const at = interDateTime(item.dataHoraSituacao);
  return {
    chargeId: item.codigoSolicitacao,
    kind,
    situation: item.situacao,
    at: at?.at ?? null,
    atPrecision: at?.precision ?? 'time',
    amountReceivedCents: item.valorTotalRecebido === undefined ? null : reaisToCents(item.valorTotalRecebido),
    method: kind === 'paid' ? paymentMethod(item.situacao, item.origemRecebimento) : null,
    verified,
  };
}

/**
 * Inter's date-time: with its offset as written; without one, a Brasília wall-clock time (UTC-3);
 * a bare date is that day at 00:00 in Brasília, with the time unknown. Null when it is not a date.
 */
export function interDateTime(text: string): { at: Date; precision: 'time' | 'date' } | null {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const withZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(text);
  const iso = dateOnly ? `${text}T00:00:00-03:00` : withZone ? text : `${text}-03:00`;
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return null;
  return { at, precision: dateOnly ? 'date' : 'time' };
}
