import { signingKey, signWebhook, type SignedHeaders } from '@payments/standard-webhooks';

/**
 * The sandbox's payment webhook is signed like our own callbacks, with Standard Webhooks
 * (libs/standard-webhooks): `webhook-id` (the notification's event id, the same on every attempt),
 * `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`. The receiver refuses a
 * stale timestamp, so every attempt is signed afresh.
 */
export { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '@payments/standard-webhooks';

/**
 * The key of BANK_SANDBOX_WEBHOOK_SECRET: a Standard Webhooks secret (`whsec_<base64>`) is decoded as
 * the standard says; any other text (such as the development default) is keyed with its UTF-8 bytes,
 * as receivables-svc does with PROVIDER_WEBHOOK_SECRET.
 */
export function webhookSigner(secret: string): Buffer {
  return signingKey(secret, 'utf8');
}

/** The Standard Webhooks headers of one attempt at `at`. */
export function signSandboxWebhook(key: Buffer, eventId: string, body: string, at: Date): SignedHeaders {
  return signWebhook(key, eventId, body, at);
}
