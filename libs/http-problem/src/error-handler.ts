import type { Next, ParameterizedContext } from 'koa';
import type { Logger } from '@payments/logger';
import { ErrorCatalog, ServiceError, type ErrorCode } from '@payments/contracts';
import { isDatabaseUnavailable } from '@payments/db';
import { problemResponse, writeResponse } from './problem';

/** What the problems of one HTTP port say beyond the catalog. */
export interface ProblemWording {
  /** Who answers, as a 503 names it when Postgres is out of reach ('the gateway'). */
  service: string;
  /** The body limit a 413 names, in bytes. */
  bodyLimitBytes: number;
  /** Where the routes are documented, said of an unknown route; nothing when not given. */
  reference?: string;
}

export interface ProblemErrorsOptions extends ProblemWording {
  logger: Logger;
}

/**
 * Outermost Koa middleware: every failure becomes application/problem+json (RFC 9457); nothing else
 * (no stack trace, no HTML, no bare 500) leaves the port. Unknown routes and methods get problems too.
 * Postgres out of reach (down, restarting, no connection to be had) is 503 service_unavailable with
 * Retry-After, so that the client retries; anything else unexpected is 500 and logged. The request's
 * id (ctx.state.requestId) is named in the problem when the port sets one.
 */
export function problemErrors(options: ProblemErrorsOptions) {
  return async (ctx: ParameterizedContext, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        const where = options.reference ? `: ${options.reference}` : '';
        throw new ServiceError('not_found', `no route ${ctx.method} ${ctx.path}${where}`);
      }
    } catch (err) {
      const failure = toServiceError(err, options);
      const requestId = requestIdOf(ctx);
      if (failure.code === 'internal_error') options.logger.error({ err, requestId, path: ctx.path }, 'request failed');
      else if (failure !== err && failure.code === 'service_unavailable')
        options.logger.warn({ err, requestId, path: ctx.path }, 'request refused: database unavailable');
      writeResponse(ctx, problemResponse(failure, requestId));
    }
  };
}

function requestIdOf(ctx: ParameterizedContext): string | undefined {
  const id: unknown = (ctx.state as { requestId?: unknown }).requestId;
  return typeof id === 'string' ? id : undefined;
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

/** A byte count as people write limits: 1 MiB, 256 KiB, 1000 bytes. */
export function bytesInWords(bytes: number): string {
  if (bytes > 0 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes > 0 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** 413 payload_too_large naming the limit. */
export function payloadTooLarge(bodyLimitBytes: number): ServiceError {
  return new ServiceError('payload_too_large', `the request body is larger than ${bytesInWords(bodyLimitBytes)}`);
}

/**
 * What an error becomes on the wire. Anything a library threw with a 4xx status stays a 4xx (the
 * client's fault, docs/architecture.md: never a 5xx for bad input), with its message only when it is
 * meant to be shown (`expose`, as koa and http-errors set it); only what is truly unexpected is a 500.
 */
export function toServiceError(err: unknown, wording: ProblemWording): ServiceError {
  if (err instanceof ServiceError) return err;
  if (isDatabaseUnavailable(err))
    return new ServiceError(
      'service_unavailable',
      `${wording.service} cannot reach its database now; try again shortly`,
    );
  const { status, statusCode, expose, message } = (err ?? {}) as {
    status?: unknown;
    statusCode?: unknown;
    expose?: unknown;
    message?: unknown;
  };
  const httpStatus = typeof status === 'number' ? status : typeof statusCode === 'number' ? statusCode : undefined;
  if (httpStatus === 413) return payloadTooLarge(wording.bodyLimitBytes);
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
