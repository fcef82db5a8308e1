import type { Next } from 'koa';
import type { Logger } from '@payments/logger';
import { API_DOCS_PATH, ErrorCatalog, OPENAPI_DOCUMENT_PATH, ServiceError, type ErrorCode } from '@payments/contracts';
import { isDatabaseUnavailable } from '@payments/db';
import type { GatewayContext } from './context';
import { problemResponse, type HttpResponse } from './problem';

/** Writes a decided response onto the Koa context. */
export function writeResponse(ctx: GatewayContext, response: HttpResponse): void {
  ctx.status = response.status;
  for (const [name, value] of Object.entries(response.headers ?? {})) ctx.set(name, value);
  // The spec's 401 carries the status text UNAUTHORIZED.
  if (response.status === 401) ctx.message = 'UNAUTHORIZED';
  ctx.body = response.body;
  if (response.headers?.['content-type']) ctx.type = response.headers['content-type'];
}

/**
 * Outermost middleware: every failure becomes application/problem+json; nothing else (no stack
 * trace, no HTML) ever leaves the gateway. Unknown routes and methods get problems too. Postgres out
 * of reach (down, restarting, no connection to be had) is 503 service_unavailable with Retry-After,
 * as a service that does not answer is, so that an ERP retries; anything else unexpected is 500.
 */
export function errorHandler(
  logger: Logger,
  reference = `the API reference is at ${API_DOCS_PATH} (OpenAPI document: ${OPENAPI_DOCUMENT_PATH})`,
) {
  return async (ctx: GatewayContext, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ServiceError('not_found', `no route ${ctx.method} ${ctx.path}: ${reference}`);
      }
    } catch (err) {
      const failure = toServiceError(err);
      if (failure.code === 'internal_error')
        logger.error({ err, requestId: ctx.state.requestId, path: ctx.path }, 'request failed');
      else if (failure !== err && failure.code === 'service_unavailable')
        logger.warn({ err, requestId: ctx.state.requestId, path: ctx.path }, 'request refused: database unavailable');
      writeResponse(ctx, problemResponse(failure, ctx.state.requestId));
    }
  };
}

/** The catalog code of an HTTP status some library threw with (koa's ctx.throw, a body stream). */
const CODE_OF_STATUS: Partial<Record<number, ErrorCode>> = {
  400: 'malformed_json',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'conflict',
  410: 'gone',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
};

/**
 * What an error becomes on the wire. Anything a library threw with a 4xx status stays a 4xx (the
 * client's fault, docs/architecture.md: never a 5xx for bad input), with its message only when it is meant to be
 * shown (`expose`, as koa and http-errors set it); only what is truly unexpected is a 500.
 */
export function toServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  if (isDatabaseUnavailable(err))
    return new ServiceError('service_unavailable', 'the gateway cannot reach its database now; try again shortly');
  const { status, statusCode, expose, message } = (err ?? {}) as {
    status?: unknown;
    statusCode?: unknown;
    expose?: unknown;
    message?: unknown;
  };
  const httpStatus = typeof status === 'number' ? status : typeof statusCode === 'number' ? statusCode : undefined;
  if (httpStatus === 413) return new ServiceError('payload_too_large', 'the request body is larger than 1 MiB');
  if (httpStatus === 415) return new ServiceError('unsupported_media_type', 'send the body as application/json');
  if (httpStatus !== undefined && httpStatus >= 400 && httpStatus < 500) {
    const code = CODE_OF_STATUS[httpStatus] ?? 'malformed_json';
    const detail =
      expose === true && typeof message === 'string' && message !== ''
        ? message
        : httpStatus === 400
          ? 'the request is malformed'
          : ErrorCatalog[code].title;
    return new ServiceError(code, detail);
  }
  return new ServiceError('internal_error', 'an unexpected error occurred');
}
