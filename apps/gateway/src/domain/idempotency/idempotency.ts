import { createHash } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import { ServiceError } from '@payments/contracts';
import type { HttpResponse } from '@payments/http-problem';
import type { BeginOutcome, IdempotencyStore, RequestIdentity } from '../../db/idempotency-store';

/**
 * required: mutating endpoints; optional: mutating but safe to repeat anyway (callback retry, replay);
 * none: safe operations, reads (search, consult, history, payment data): the header is ignored, and
 * nothing is stored or locked under it, so the same request with the same key simply runs again.
 */
export type IdempotencyPolicy = 'required' | 'optional' | 'none';

const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/; // printable ASCII, no spaces, as Stripe accepts
const REPLAYED_HEADERS = ['content-type', 'x-next-cursor', 'location'];

/** Reads and checks the Idempotency-Key header; undefined when absent and optional. */
export function readIdempotencyKey(header: string, policy: IdempotencyPolicy): string | undefined {
  if (policy === 'none') return undefined;
  if (header === '') {
    if (policy === 'required')
      throw new ServiceError(
        'idempotency_key_missing',
        'this endpoint requires an Idempotency-Key header (any unique string, e.g. a UUID)',
        [{ in: 'header', path: 'Idempotency-Key', message: 'is required' }],
      );
    return undefined;
  }
  if (!KEY_SHAPE.test(header)) {
    throw new ServiceError(
      'idempotency_key_invalid',
      'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces',
      [{ in: 'header', path: 'Idempotency-Key', message: 'is invalid' }],
    );
  }
  return header;
}

/** Method, path and body (key order and whitespace not counting) identify "the same request". */
export function fingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${stableStringify(body ?? null)}`)
    .digest('hex');
}

/** A request's key and what its claim found (the gateway's admission took it). */
export interface BegunRequest {
  identity: RequestIdentity;
  begun: BeginOutcome;
}

/**
 * Runs `execute` at most once per (tenant, key): a completed request is replayed with
 * Idempotent-Replayed: true; the same key on a different request is 422; on a request still running, 409.
 * Responses below 500 are stored; a 5xx releases the key so that a retry runs again (handlers are
 * idempotent on the ERP's ids, so that retry cannot create anything twice). Except when a service got
 * the request and did not answer in time (NoReplyError): it may still commit, so the key stays locked
 * and a retry is told 409 until the lock times out (IDEMPOTENCY_LOCK_TIMEOUT_MS), as after a gateway
 * crash; only then does a retry run it again. `request` is the key's claim when the caller took it
 * (the gateway's admission), or the key alone to claim it here; undefined without a key. The
 * response is stored, or the key released, only while this attempt holds the key's lock: a retry that
 * took over a timed-out lock is not overwritten by the slow attempt it replaced.
 */
export async function runIdempotently(
  store: Pick<IdempotencyStore, 'begin' | 'complete' | 'release'>,
  request: BegunRequest | RequestIdentity | undefined,
  execute: () => Promise<HttpResponse>,
  toResponse: (err: ServiceError) => HttpResponse,
): Promise<HttpResponse> {
  const safeExecute = () =>
    execute().catch((err: unknown) => {
      if (err instanceof ServiceError && !err.outcomeUnknown) return toResponse(err);
      throw err;
    });
  if (!request) return safeExecute();
  const { identity, begun: outcome } =
    'begun' in request ? request : { identity: request, begun: await store.begin(request) };

  if (outcome.kind === 'mismatch')
    throw new ServiceError(
      'idempotency_key_reused',
      'this Idempotency-Key was used with a different request (method, path or body); use a new key',
    );
  if (outcome.kind === 'in_progress')
    throw new ServiceError(
      'idempotency_request_in_progress',
      'a request with this Idempotency-Key is still being processed; retry shortly',
    );
  if (outcome.kind === 'replay') {
    return {
      status: outcome.response.status,
      body: JSON.parse(outcome.response.body),
      headers: { ...outcome.response.headers, 'idempotent-replayed': 'true' },
    };
  }

  const { hold } = outcome;
  let response: HttpResponse;
  try {
    response = await safeExecute();
  } catch (err) {
    // A service that got the request and did not answer in time may still commit: the key stays held.
    if (!(err instanceof ServiceError && err.outcomeUnknown))
      await store.release(identity, hold).catch(() => undefined);
    throw err;
  }
  // When this attempt's lock was taken over meanwhile, release and complete change nothing ('stale'):
  // its client still gets its answer, and the retry holding the key decides what is stored.
  if (response.status >= 500) {
    await store.release(identity, hold);
  } else {
    const headers = Object.fromEntries(
      Object.entries(response.headers ?? {}).filter(([name]) => REPLAYED_HEADERS.includes(name.toLowerCase())),
    );
    await store.complete(identity, hold, { status: response.status, body: JSON.stringify(response.body), headers });
  }
  return response;
}
