import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ProviderPayment } from '../domain/ports';

/** The bank sandbox's payment notification, checked: HMAC-SHA256 of the raw body with the shared secret. */
export class InvalidWebhookError extends Error {
  override readonly name = 'InvalidWebhookError';
}

interface SandboxNotification {
  event: string;
  /** The provider account version the charge was registered under; absent for legacy charges (no account). */
  account_reference?: string | null;
  charge_id: string;
  our_number: string;
  paid_at: string;
  amount_paid_cents: number;
  fee_cents: number;
  method: 'boleto' | 'pix' | 'manual';
}

/** A checked payment notification: the payment, and the account its charge belongs to (null: a legacy charge). */
export interface SandboxPaymentNotice {
  payment: ProviderPayment;
  accountReference: string | null;
}

export function verifySandboxWebhook(
  secret: string,
  rawBody: string,
  signatureHeader: string | undefined,
  eventIdHeader: string | undefined,
): SandboxPaymentNotice | null {
  const given = /^sha256=([0-9a-f]{64})$/i.exec(signatureHeader ?? '')?.[1];
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  if (!given || !timingSafeEqual(Buffer.from(given, 'hex'), expected)) throw new InvalidWebhookError('bad signature');
  let body: SandboxNotification;
  try {
    body = JSON.parse(rawBody) as SandboxNotification;
  } catch {
    throw new InvalidWebhookError('body is not JSON');
  }
  if (body.event !== 'charge.paid') return null; // other events are not used (yet)
  const paidAt = new Date(body.paid_at);
  if (
    !eventIdHeader ||
    !body.charge_id ||
    Number.isNaN(paidAt.getTime()) ||
    !Number.isInteger(body.amount_paid_cents) ||
    !Number.isInteger(body.fee_cents) ||
    !['boleto', 'pix', 'manual'].includes(body.method) ||
    (body.account_reference != null && typeof body.account_reference !== 'string')
  ) {
    throw new InvalidWebhookError('incomplete payment notification');
  }
  return {
    payment: {
      eventId: `bank-sandbox:${eventIdHeader}`,
      chargeId: body.charge_id,
      paidAt,
      amountPaidCents: body.amount_paid_cents,
      feeCents: body.fee_cents,
      method: body.method,
    },
    accountReference: body.account_reference ?? null,
  };
}
