import type { Next } from 'koa';
import type { Logger } from '@payments/logger';
import { API_DOCS_PATH, OPENAPI_DOCUMENT_PATH, ServiceError } from '@payments/contracts';
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
export function errorHandler(logger: Logger) {
  return async (ctx: GatewayContext, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ServiceError(
          'not_found',
          `no route ${ctx.method} ${ctx.path}: the API reference is at ${API_DOCS_PATH} (OpenAPI document: ${OPENAPI_DOCUMENT_PATH})`,
        );
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

function toServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  if (isDatabaseUnavailable(err))
    return new ServiceError('service_unavailable', 'the gateway cannot reach its database now; try again shortly');
  // Errors thrown by koa-bodyparser / raw-body carry an HTTP status.
  const status =
    (err as { status?: number; statusCode?: number }).status ?? (err as { statusCode?: number }).statusCode;
  const type = (err as { type?: string }).type;
  if (status === 413 || type === 'entity.too.large')
    return new ServiceError('payload_too_large', 'the request body is larger than 1 MiB');
  if (status === 415) return new ServiceError('unsupported_media_type', 'send the body as application/json');
  if (status === 400)
    return new ServiceError('malformed_json', 'the request body is not valid JSON (an object or an array)');
  return new ServiceError('internal_error', 'an unexpected error occurred');
}
