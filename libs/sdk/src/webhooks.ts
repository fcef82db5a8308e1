import { createHmac, timingSafeEqual } from 'node:crypto';

/** The Standard Webhooks headers of a callback; names in lower case, as node:http and fetch give them. */
export interface WebhookHeaders {
  'webhook-id'?: string | null;
  'webhook-timestamp'?: string | null;
  'webhook-signature'?: string | null;
}

export type WebhookFailure = 'missing_headers' | 'stale_timestamp' | 'bad_signature';

/** Why a callback was refused; nothing of it came from the secret. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';

  constructor(readonly reason: WebhookFailure) {
    super(`callback refused: ${reason}`);
  }
}

export interface VerifyOptions {
  /** How far webhook-timestamp may be from now, either way (default 300 s): an old capture cannot be replayed. */
  toleranceSeconds?: number;
  /** For tests. */
  now?: () => Date;
}

const SECRET_PREFIX = 'whsec_';

/**
 * Checks a callback before its body is trusted: one of the space-separated `v1,<base64>` signatures
 * (several during a signing-secret rotation) must be the HMAC-SHA256 of "id.timestamp.body" under
 * one of `secrets`, compared in constant time, and the timestamp must be recent. Pass the raw body
 * exactly as received, before any JSON parsing. Returns the webhook-id (to drop duplicates); throws
 * WebhookVerificationError otherwise.
 */
export function verifyWebhook(
  secrets: string | readonly string[],
  headers: WebhookHeaders | Headers,
  rawBody: string | Uint8Array,
  options: VerifyOptions = {},
): string {
  const get = (name: keyof WebhookHeaders) =>
    (headers instanceof Headers ? headers.get(name) : headers[name]) ?? undefined;
  const id = get('webhook-id');
  const timestamp = get('webhook-timestamp');
  const signatures = get('webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing_headers');

  const nowSeconds = (options.now?.() ?? new Date()).getTime() / 1000;
  const tolerance = options.toleranceSeconds ?? 300;
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > tolerance)
    throw new WebhookVerificationError('stale_timestamp');

  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), Buffer.from(rawBody)]);
  const expected = (typeof secrets === 'string' ? [secrets] : secrets).map((secret) =>
    createHmac('sha256', keyOf(secret)).update(signed).digest(),
  );
  const given = signatures
    .split(' ')
    .map((part) => part.split(','))
    .filter(([version, value]) => version === 'v1' && value !== undefined)
    .map(([, value]) => Buffer.from(value ?? '', 'base64'));
  const matches = given.some((candidate) =>
    expected.some((digest) => candidate.length === digest.length && timingSafeEqual(candidate, digest)),
  );
  if (!matches) throw new WebhookVerificationError('bad_signature');
  return id;
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}
