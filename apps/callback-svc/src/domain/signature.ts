import { signingKey, signWebhook } from '@payments/standard-webhooks';

// Decoded keys by secret: decoding on every attempt is wasted work. Bounded, as secrets can rotate.
const keys = new Map<string, Buffer>();
const MAX_CACHED_KEYS = 10_000;

function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size > MAX_CACHED_KEYS) keys.clear();
    key = signingKey(secret);
    keys.set(secret, key);
  }
  return key;
}

/**
 * Standard Webhooks headers for one attempt (libs/standard-webhooks). Several secrets (the new and
 * the old one during a rotation's overlap) give one space-separated signature each, the first
 * secret's first; a receiver holding any of them verifies the callback.
 */
export function signedHeaders(
  secrets: string | readonly string[],
  eventId: string,
  body: string,
  at: Date,
): Record<string, string> {
  return signWebhook((typeof secrets === 'string' ? [secrets] : secrets).map(keyOf), eventId, body, at);
}
