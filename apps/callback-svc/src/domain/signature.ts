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

/** Standard Webhooks headers for one attempt: the signature covers "id.timestamp.body". */
export function signedHeaders(secret: string, eventId: string, body: string, at: Date): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = createHmac('sha256', keyOf(secret)).update(`${eventId}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': eventId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
