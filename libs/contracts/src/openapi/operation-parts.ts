import { Type } from '@sinclair/typebox';
import { EVENT_ID_PATTERN } from '../callbacks';
import { Uuid } from '../common';
import type { ErrorCode } from '../errors';
import type { ApiParameter } from './operation-types';
import * as ex from './examples';

/* Error sets shared by the routes that go through the same gateway pipeline ----------------------- */

/** Endpoints mounted through the gateway's pipeline: access token, then the tenant's rate limit. */
export const GUARDED: Partial<Record<ErrorCode, string>> = {
  unauthorized:
    'the access token is missing, malformed or wrongly signed, or its tenant or integration token was disabled or revoked',
  token_expired:
    'the access token has expired: get a new one from POST /api/v1/authenticate (POST /api/v1/refresh-token renews one before it expires)',
  rate_limited: "over the tenant's rate limit; retry after Retry-After seconds",
};

/** The auth endpoints, limited by client address and by credential before any lookup. */
export const AUTH_RATE_LIMITED: Partial<Record<ErrorCode, string>> = {
  rate_limited: 'too many authentications from this address or with this credential; retry after Retry-After seconds',
};

/** Signed downloads, limited by client address before the link is checked. */
export const DOWNLOAD_RATE_LIMITED: Partial<Record<ErrorCode, string>> = {
  rate_limited: 'too many downloads from this address; retry after Retry-After seconds',
};

/** Endpoints that read a JSON body. */
export const JSON_BODY: Partial<Record<ErrorCode, string>> = {
  malformed_json: 'the body is not valid JSON, or nests arrays and objects deeper than 32 levels',
  request_timeout: 'the body did not arrive in time (REQUEST_TIMEOUT_MS, 30 s)',
  payload_too_large: 'the body is larger than 1 MiB',
  unsupported_media_type: 'the body is not application/json',
};

export const IDEMPOTENCY_REQUIRED: Partial<Record<ErrorCode, string>> = {
  idempotency_key_missing: 'no Idempotency-Key header',
  idempotency_key_invalid: 'the Idempotency-Key is not 1 to 255 printable ASCII characters',
  idempotency_request_in_progress: 'a request with this Idempotency-Key is still running',
  idempotency_key_reused: 'this Idempotency-Key was used with another request (method, path or body)',
};

export const IDEMPOTENCY_OPTIONAL: Partial<Record<ErrorCode, string>> = {
  idempotency_key_invalid: IDEMPOTENCY_REQUIRED.idempotency_key_invalid,
  idempotency_request_in_progress: IDEMPOTENCY_REQUIRED.idempotency_request_in_progress,
  idempotency_key_reused: IDEMPOTENCY_REQUIRED.idempotency_key_reused,
};

export const unavailable = (service: string): Partial<Record<ErrorCode, string>> => ({
  service_unavailable: `the ${service} service is not running or did not answer in time, or the gateway cannot reach its database; retry after Retry-After seconds`,
});

/** Endpoints that need only the gateway's own database. */
export const DATABASE_UNAVAILABLE: Partial<Record<ErrorCode, string>> = {
  service_unavailable: 'the gateway cannot reach its database; retry after Retry-After seconds',
};

/* Parameters -------------------------------------------------------------------------------------- */

export const uuidPath = (description: string, example: string): ApiParameter => ({
  name: 'uuid',
  description,
  schema: Uuid(),
  required: true,
  example,
});

export const eventIdPath: ApiParameter = {
  name: 'event_id',
  description: 'The event id: the webhook-id header of the callback',
  schema: Type.String({ pattern: EVENT_ID_PATTERN }),
  required: true,
  example: ex.EventIds.cancelled,
};

/** The query of every signed download link (booklets, slip files): its expiry and HMAC. */
export const SIGNED_LINK_QUERY: ApiParameter[] = [
  {
    name: 'expires',
    description: 'Expiry of the link, Unix seconds',
    schema: Type.String({ pattern: '^\\d{1,12}$' }),
    required: true,
    example: ex.DOWNLOAD_EXPIRES_EXAMPLE,
  },
  {
    name: 'signature',
    description: 'HMAC-SHA256 of the link, hex',
    schema: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    required: true,
    example: ex.DOWNLOAD_SIGNATURE_EXAMPLE,
  },
];

/** The charge named in a signed slip file link. */
export const SLIP_LINK_RECEIVABLE: ApiParameter = {
  name: 'receivable_id',
  description: 'The charge, as in the link',
  schema: Type.String(),
  required: true,
  example: ex.Ids.receivableSlip,
};
