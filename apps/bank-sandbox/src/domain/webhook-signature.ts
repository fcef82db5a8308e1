import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The sandbox's webhook signature, sent as `X-Sandbox-Signature: sha256=<hex>`: HMAC-SHA256 of the raw
 * body keyed with the shared secret. Like most banks' webhooks it signs the body only; receivers drop
 * replays by X-Sandbox-Event-Id (and a charge is paid once anyway).
 */
export const SIGNATURE_HEADER = 'x-sandbox-signature';
export const EVENT_ID_HEADER = 'x-sandbox-event-id';

export function signSandboxWebhook(secret: string, rawBody: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/** Constant-time check of a received signature header against the raw body. */
export function verifySandboxWebhook(secret: string, rawBody: string | Buffer, header: string | undefined): boolean {
  if (!header) return false;
  const expected = Buffer.from(signSandboxWebhook(secret, rawBody));
  const given = Buffer.from(header.trim().toLowerCase());
  return given.length === expected.length && timingSafeEqual(given, expected);
}
