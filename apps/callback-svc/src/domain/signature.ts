import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signing with node:crypto's native HMAC. The standardwebhooks package computes
 * SHA-256 in JavaScript, which took about 6 % of callback-svc's CPU under load (CPU profile of
 * bench/receivables); its reference verifier checks these signatures in the tests.
 */
const SECRET_PREFIX = 'whsec_';

// Decoded keys by secret: decoding on every attempt is wasted work. Bounded, as secrets can rotate.
const keys = new Map<string, Buffer>();

function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size > 10_000) keys.clear();
    key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
    keys.set(secret, key);
  }
  return key;
}

/**
 * Standard Webhooks headers for one attempt: each signature covers "id.timestamp.body". Several secrets
 * (the new and the old one during a rotation's overlap) give one space-separated signature each, the
 * first secret's first; a receiver holding any of them verifies the callback.
 */
export function signedHeaders(
  secrets: string | readonly string[],
  eventId: string,
  body: string,
  at: Date,
): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signed = `${eventId}.${timestamp}.${body}`;
  const signatures = (typeof secrets === 'string' ? [secrets] : secrets).map(
    (secret) => `v1,${createHmac('sha256', keyOf(secret)).update(signed).digest('base64')}`,
  );
  return { 'webhook-id': eventId, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}
