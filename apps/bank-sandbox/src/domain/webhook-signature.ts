import { Webhook } from 'standardwebhooks';

/**
 * The sandbox's payment webhook is signed like our own callbacks, with Standard Webhooks: headers
 * `webhook-id` (the notification's event id, the same on every attempt), `webhook-timestamp` (Unix
 * seconds of this attempt) and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.
 * The receiver refuses a stale timestamp, so every attempt is signed afresh. Signing and verifying are
 * the standardwebhooks package's, not code of ours.
 */
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

const SECRET_PREFIX = 'whsec_';

/**
 * The key of BANK_SANDBOX_WEBHOOK_SECRET: a Standard Webhooks secret (`whsec_<base64>`) is decoded as
 * the standard says; any other text (such as the development default) is keyed with its UTF-8 bytes,
 * as receivables-svc does with PROVIDER_WEBHOOK_SECRET.
 */
export function webhookSigner(secret: string): Webhook {
  return secret.startsWith(SECRET_PREFIX) ? new Webhook(secret) : new Webhook(Buffer.from(secret), { format: 'raw' });
}

/** The Standard Webhooks headers of one attempt at `at`. */
export function signSandboxWebhook(
  signer: Webhook,
  eventId: string,
  body: string,
  at: Date,
): Record<typeof WEBHOOK_ID_HEADER | typeof WEBHOOK_TIMESTAMP_HEADER | typeof WEBHOOK_SIGNATURE_HEADER, string> {
  return {
    [WEBHOOK_ID_HEADER]: eventId,
    [WEBHOOK_TIMESTAMP_HEADER]: String(Math.floor(at.getTime() / 1000)),
    [WEBHOOK_SIGNATURE_HEADER]: signer.sign(eventId, at, body),
  };
}
