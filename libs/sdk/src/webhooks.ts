import { signingKey, verifyWebhook as verifySigned, type VerifyFailure } from '@payments/standard-webhooks';

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

/** The library's reasons, as this SDK has always named them. */
const FAILURES: Record<VerifyFailure, WebhookFailure> = {
  missing_headers: 'missing_headers',
  timestamp_not_a_number: 'stale_timestamp',
  too_old: 'stale_timestamp',
  too_new: 'stale_timestamp',
  bad_signature: 'bad_signature',
};

/**
 * Checks a callback before its body is trusted: one of the space-separated `v1,<base64>` signatures
 * (several during a signing-secret rotation) must be the HMAC-SHA256 of "id.timestamp.body" under
 * one of `secrets`, compared in constant time, and the timestamp must be recent. Pass the raw body
 * exactly as received, before any JSON parsing. Returns the webhook-id (to drop duplicates); throws
 * WebhookVerificationError otherwise. The Standard Webhooks code is libs/standard-webhooks, bundled.
 */
export function verifyWebhook(
  secrets: string | readonly string[],
  headers: WebhookHeaders | Headers,
  rawBody: string | Uint8Array,
  options: VerifyOptions = {},
): string {
  const get = (name: keyof WebhookHeaders) =>
    (headers instanceof Headers ? headers.get(name) : headers[name]) ?? undefined;
  const keys = (typeof secrets === 'string' ? [secrets] : secrets).map((secret) => signingKey(secret));
  const verified = verifySigned(
    keys,
    { id: get('webhook-id'), timestamp: get('webhook-timestamp'), signature: get('webhook-signature') },
    rawBody,
    options,
  );
  if (!verified.ok) throw new WebhookVerificationError(FAILURES[verified.failure]);
  return verified.id;
}
