import { WebhookBody, WebhookItem, interViolations, type InterSituationName } from '@payments/inter-cobranca';
import type { ProviderPayment } from '../../domain/ports';

/** A body that is not Inter's charge notification: answered 400, nothing changes. */
export class InvalidInterWebhookError extends Error {
  override readonly name = 'InvalidInterWebhookError';
}

/**
 * A charge update from Inter's webhook, before it is confirmed by consulting the charge (the body is
 * not proof of anything: the bank is asked).
 */
export type InterNotice = Pick<ProviderPayment, 'chargeId'> & {
  situation: InterSituationName;
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
  const violations = interViolations(WebhookBody, items);
  if (violations.length > 0)
    throw new InvalidInterWebhookError(
      `not an Inter charge notification: ${violations
        .slice(0, 5)
        .map((v) => `${v.path || '/'} ${v.message}`)
        .join('; ')}`,
    );
  return (items as WebhookItem[]).map((item) => ({
    chargeId: item.codigoSolicitacao,
    situation: item.situacao,
    ourNumber: item.nossoNumero ?? null,
  }));
}
