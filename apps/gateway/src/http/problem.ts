import {
  ErrorCatalog,
  PROBLEM_CONTENT_TYPE,
  problemTypeUri,
  ServiceError,
  type FieldError,
  type Problem,
} from '@payments/contracts';

/** An HTTP response the gateway has decided on, before it is written. */
export interface HttpResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * Seconds an ERP is asked to wait before retrying a 503: long enough for a service or Postgres to
 * restart, short enough that a passing outage costs little.
 */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_S = 5;

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
  if (err.code === 'unauthorized') headers['www-authenticate'] = 'Bearer realm="api", error="invalid_token"';
  if (err.code === 'service_unavailable') headers['retry-after'] = String(SERVICE_UNAVAILABLE_RETRY_AFTER_S);
  return { status, body, headers };
}

export function validationError(
  errors: FieldError[],
  detail = 'the request has invalid fields; see errors',
): ServiceError {
  return new ServiceError('validation_failed', detail, errors);
}
