import { signingKey, verifyWebhook, type VerifyFailure } from '@payments/standard-webhooks';
import type { ProviderPayment } from '../../domain/ports';

/**
 * The bank sandbox's payment notification, checked the way the ERP checks our callbacks: Standard
 * Webhooks (webhook-id, webhook-timestamp, webhook-signature `v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">`), verified by libs/standard-webhooks, which also refuses a timestamp
 * more than 5 minutes old or ahead. A replayed webhook-id is the caller's to drop (provider_events).
 */
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

/** The Standard Webhooks headers as received (a header sent twice arrives as a list: not a valid notice). */
export interface WebhookHeaders {
  'webhook-id'?: string | string[];
  'webhook-timestamp'?: string | string[];
  'webhook-signature'?: string | string[];
}

/**
 * The key of PROVIDER_WEBHOOK_SECRET: a Standard Webhooks secret (`whsec_<base64>`) is decoded as
 * the standard says; any other text (such as the development default) is keyed with its UTF-8 bytes,
 * as the bank sandbox does with BANK_SANDBOX_WEBHOOK_SECRET.
 */
export function sandboxWebhookVerifier(secret: string): Buffer {
  return signingKey(secret, 'utf8');
}

export function verifySandboxWebhook(
  key: Buffer,
  rawBody: string,
  headers: WebhookHeaders,
): SandboxPaymentNotice | null {
  const verified = verifyWebhook(
    key,
    {
      id: single(headers['webhook-id']),
      timestamp: single(headers['webhook-timestamp']),
      signature: single(headers['webhook-signature']),
    },
    rawBody,
  );
  if (!verified.ok) throw new InvalidWebhookError(REASONS[verified.failure]);
  const id = verified.id;
  let body: SandboxNotification;
  try {
    body = JSON.parse(rawBody) as SandboxNotification;
  } catch {
    throw new InvalidWebhookError('body is not JSON');
  }
  if (body.event !== 'charge.paid') return null; // other events are not used (yet)
  const paidAt = new Date(body.paid_at);
  if (
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
      eventId: `bank-sandbox:${id}`,
      chargeId: body.charge_id,
      paidAt,
      amountPaidCents: body.amount_paid_cents,
      feeCents: body.fee_cents,
      method: body.method,
    },
    accountReference: body.account_reference ?? null,
  };
}

function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** The verifier's reasons, in our words: whether the headers, the signature or the clock refused it. */
const REASONS: Record<VerifyFailure, string> = {
  missing_headers: 'missing webhook-id, webhook-timestamp or webhook-signature',
  timestamp_not_a_number: 'webhook-timestamp is not a number',
  too_old: 'webhook-timestamp is more than 5 minutes old',
  too_new: 'webhook-timestamp is more than 5 minutes ahead',
  bad_signature: 'bad signature',
};
