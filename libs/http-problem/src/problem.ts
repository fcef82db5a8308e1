import type { ParameterizedContext } from 'koa';
import {
  ErrorCatalog,
  PROBLEM_CONTENT_TYPE,
  problemTypeUri,
  type Problem,
  type ServiceError,
} from '@payments/contracts';

/** An HTTP response decided on, before it is written. */
export interface HttpResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * Seconds a client is asked to wait before retrying a 503: long enough for a service or Postgres to
 * restart, short enough that a passing outage costs little.
 */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_S = 5;

/** A ServiceError as an RFC 9457 problem (application/problem+json), with the request's id when known. */
export function problemResponse(err: ServiceError, requestId?: string): HttpResponse {
  const { status, title } = ErrorCatalog[err.code];
  const body: Problem & { request_id?: string } = {
    type: problemTypeUri(err.code),
    title,
    status,
    detail: err.detail,
    code: err.code,
  };
  if (err.errors && err.errors.length > 0) body.errors = err.errors;
  if (requestId) body.request_id = requestId;
  const headers: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE };
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="api", error="invalid_token"';
  if (err.code === 'service_unavailable') headers['retry-after'] = String(SERVICE_UNAVAILABLE_RETRY_AFTER_S);
  return { status, body, headers };
}

/** Writes a decided response onto the Koa context. */
export function writeResponse(ctx: ParameterizedContext, response: HttpResponse): void {
  ctx.status = response.status;
  for (const [name, value] of Object.entries(response.headers ?? {})) ctx.set(name, value);
  // The spec's 401 carries the status text UNAUTHORIZED.
  if (response.status === 401) ctx.message = 'UNAUTHORIZED';
  ctx.body = response.body;
  if (response.headers?.['content-type']) ctx.type = response.headers['content-type'];
}
