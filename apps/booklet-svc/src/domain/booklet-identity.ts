import { createHash, randomUUID } from 'node:crypto';

/**
 * The id of the booklet a request asks for: derived from (tenant, payment slip id, Idempotency-Key),
 * so that the same request retried (after a timeout, a 5xx, a gateway crash mid-request) names the
 * booklet the first attempt stored, and no second booklet or callback follows. The payment slip id
 * is matched case-insensitively, as every ERP id is. A request without a key (an older gateway)
 * gets a random id.
 *
 * A name-based UUID (RFC 9562 version 8, SHA-256): the `uuid` package's v5 would do the same with
 * SHA-1 and a namespace, but it is not a dependency, and these 8 lines are the whole of it.
 */
export function bookletIdFor(tenantId: string, paymentSlipId: string, idempotencyKey: string | undefined): string {
  if (!idempotencyKey) return randomUUID();
  const digest = createHash('sha256')
    .update(`booklet\n${tenantId.toLowerCase()}\n${paymentSlipId.toLowerCase()}\n${idempotencyKey}`)
    .digest();
  const bytes = digest.subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
