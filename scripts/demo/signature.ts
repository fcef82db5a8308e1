import { createHmac, timingSafeEqual } from 'node:crypto';

/** The Standard Webhooks headers of a callback (lower-case names, as node:http gives them). */
export interface WebhookHeaders {
  'webhook-id'?: string;
  'webhook-timestamp'?: string;
  'webhook-signature'?: string;
}

/**
 * The README's verification snippet, typed: true when one `v1,` signature of "id.timestamp.body",
 * keyed with the tenant's signing secret, matches and the timestamp is recent.
 */
export function verifyCallback(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string,
  toleranceSeconds = 300,
): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest();
  return signatures.split(' ').some((versioned) => {
    const [version, signature] = versioned.split(',');
    const given = Buffer.from(signature ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
