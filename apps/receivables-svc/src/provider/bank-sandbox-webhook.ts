import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { ProviderPayment } from '../domain/ports';

/**
 * The bank sandbox's payment notification, checked the way the ERP checks our callbacks: Standard
 * Webhooks (webhook-id, webhook-timestamp, webhook-signature `v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">`), verified by the standardwebhooks package, which also refuses a timestamp
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

const SECRET_PREFIX = 'whsec_';

/**
 * The verifier of PROVIDER_WEBHOOK_SECRET: a Standard Webhooks secret (`whsec_<base64>`) is decoded as
 * the standard says; any other text (such as the development default) is keyed with its UTF-8 bytes,
 * as the bank sandbox does with BANK_SANDBOX_WEBHOOK_SECRET.
 */
export function sandboxWebhookVerifier(secret: string): Webhook {
  return secret.startsWith(SECRET_PREFIX) ? new Webhook(secret) : new Webhook(Buffer.from(secret), { format: 'raw' });
}

export function verifySandboxWebhook(
  verifier: Webhook,
  rawBody: string,
  headers: WebhookHeaders,
): SandboxPaymentNotice | null {
  const id = single(headers['webhook-id']);
  const timestamp = single(headers['webhook-timestamp']);
  const signature = single(headers['webhook-signature']);
  if (!id || !timestamp || !signature)
    throw new InvalidWebhookError('missing webhook-id, webhook-timestamp or webhook-signature');
  // The verifier reads the timestamp with parseInt, which takes "17e8" or "1795435200abc": we do not.
  if (!/^\d{1,12}$/.test(timestamp)) throw new InvalidWebhookError('webhook-timestamp is not a number');
  try {
    verifier.verify(
      rawBody,
      { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature },
      { jsonParse: false },
    );
  } catch (err) {
    if (err instanceof WebhookVerificationError) throw new InvalidWebhookError(reasonOf(err));
    throw err;
  }
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

/** The verifier's reasons, in our words: whether the signature or the clock refused it. */
function reasonOf(err: WebhookVerificationError): string {
  if (/too old/i.test(err.message)) return 'webhook-timestamp is more than 5 minutes old';
  if (/too new/i.test(err.message)) return 'webhook-timestamp is more than 5 minutes ahead';
  return 'bad signature';
}
