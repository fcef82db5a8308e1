import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * Standard Webhooks (standardwebhooks.com), the one implementation of the repository: callback-svc
 * signs the ERPs' callbacks with it, the bank sandbox its payment notices, receivables-svc verifies
 * those, and the SDK (which bundles it) verifies callbacks for an ERP. Each signature is
 * `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`; several (a secret rotation's overlap) are
 * separated by spaces. Written on node:crypto rather than on the standardwebhooks package, which
 * computes SHA-256 in JavaScript: that took about 6 % of callback-svc's CPU under load
 * (docs/capacity.md). The package remains these tests' reference.
 */

export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

/** The three headers of a signed message, by name. */
export type SignedHeaders = Record<
  typeof WEBHOOK_ID_HEADER | typeof WEBHOOK_TIMESTAMP_HEADER | typeof WEBHOOK_SIGNATURE_HEADER,
  string
>;

const SECRET_PREFIX = 'whsec_';

/**
 * How a secret without the `whsec_` prefix is read: `base64` (our tenants' signing secrets, as the
 * standard's libraries do) or `utf8` (a plain text setting, such as the sandbox's development
 * webhook secret). A `whsec_` secret is always its base64 remainder.
 */
export type PlainSecretEncoding = 'base64' | 'utf8';

/** The HMAC key of a secret. */
export function signingKey(secret: string, plain: PlainSecretEncoding = 'base64'): Buffer {
  if (secret.startsWith(SECRET_PREFIX)) return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return Buffer.from(secret, plain);
}

/** Unix seconds, as webhook-timestamp carries them. */
export function webhookTimestamp(at: Date): string {
  return String(Math.floor(at.getTime() / 1000));
}

function digest(key: Buffer, id: string, timestamp: string, body: string | Uint8Array): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
}

/**
 * The headers of one attempt at `at`, one signature per key, the first key's first: a receiver
 * holding any of the secrets verifies the message. Sign every attempt afresh (receivers refuse a
 * stale timestamp).
 */
export function signWebhook(
  keys: Buffer | readonly Buffer[],
  id: string,
  body: string | Uint8Array,
  at: Date,
): SignedHeaders {
  const timestamp = webhookTimestamp(at);
  const signatures = (Buffer.isBuffer(keys) ? [keys] : keys).map(
    (key) => `v1,${digest(key, id, timestamp, body).toString('base64')}`,
  );
  return {
    [WEBHOOK_ID_HEADER]: id,
    [WEBHOOK_TIMESTAMP_HEADER]: timestamp,
    [WEBHOOK_SIGNATURE_HEADER]: signatures.join(' '),
  };
}

/** The headers as received (a header given twice is not a signed message). */
export interface ReceivedHeaders {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

export type VerifyFailure = 'missing_headers' | 'timestamp_not_a_number' | 'too_old' | 'too_new' | 'bad_signature';

export type Verified = { ok: true; id: string } | { ok: false; failure: VerifyFailure };

export interface VerifyOptions {
  /** How far webhook-timestamp may be from now, either way (default 300 s): an old capture is not replayed. */
  toleranceSeconds?: number;
  now?: () => Date;
}

const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * Checks a message before its body is trusted: the timestamp recent, and one of its `v1` signatures
 * the HMAC of "id.timestamp.body" under one of `keys`, compared in constant time. Pass the raw body
 * exactly as received. The timestamp must be digits only: "17e8" or "1795435200abc" are refused, not
 * read as a number's prefix.
 */
export function verifyWebhook(
  keys: Buffer | readonly Buffer[],
  headers: ReceivedHeaders,
  rawBody: string | Uint8Array,
  options: VerifyOptions = {},
): Verified {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) return { ok: false, failure: 'missing_headers' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, failure: 'timestamp_not_a_number' };
  const now = (options.now?.() ?? new Date()).getTime() / 1000;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (now - Number(timestamp) > tolerance) return { ok: false, failure: 'too_old' };
  if (Number(timestamp) - now > tolerance) return { ok: false, failure: 'too_new' };
  const expected = (Buffer.isBuffer(keys) ? [keys] : keys).map((key) => digest(key, id, timestamp, rawBody));
  const given = signature
    .split(' ')
    .map((part) => part.split(','))
    .filter((parts): parts is [string, string] => parts.length === 2 && parts[0] === 'v1')
    .map(([, value]) => Buffer.from(value, 'base64'));
  const matches = given.some((candidate) =>
    expected.some((mac) => candidate.length === mac.length && timingSafeEqual(candidate, mac)),
  );
  return matches ? { ok: true, id } : { ok: false, failure: 'bad_signature' };
}
