import type { Context, Next } from 'koa';
import type { Logger } from '@payments/logger';

/** Error codes of the sandbox's bank-like API: `{ error: { code, message } }`. */
export type BankErrorCode =
  | 'unauthorized'
  | 'malformed_json'
  | 'invalid_request'
  | 'idempotency_key_reused'
  | 'charge_rejected'
  | 'charge_not_open'
  | 'payment_method_not_accepted'
  | 'not_found'
  | 'unavailable'
  | 'internal_error';

export class BankApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: BankErrorCode,
    message: string,
    readonly details?: Array<{ path: string; message: string }>,
  ) {
    super(message);
  }
}

export interface ErrorBody {
  error: { code: BankErrorCode; message: string; details?: Array<{ path: string; message: string }> };
}

/** Outermost middleware: every failure, unknown route included, answers JSON `{ error }`. */
export function errorHandler(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined)
        throw new BankApiError(404, 'not_found', `no route ${ctx.method} ${ctx.path}`);
    } catch (err) {
      const failure = toBankApiError(err);
      if (failure.status >= 500 && failure.code === 'internal_error')
        logger.error({ err, path: ctx.path }, 'request failed');
      ctx.status = failure.status;
      const body: ErrorBody = {
        error: {
          code: failure.code,
          message: failure.message,
          ...(failure.details ? { details: failure.details } : {}),
        },
      };
      ctx.body = body;
      if (failure.status === 401) ctx.set('www-authenticate', 'Bearer');
    }
  };
}

function toBankApiError(err: unknown): BankApiError {
  if (err instanceof BankApiError) return err;
  // koa-bodyparser / raw-body errors carry an HTTP status: malformed JSON, body too large, ...
  const status = (err as { status?: number }).status;
  if (status === 400) return new BankApiError(400, 'malformed_json', 'the request body is not valid JSON');
  if (typeof status === 'number' && status >= 400 && status < 500)
    return new BankApiError(status, 'invalid_request', (err as Error).message);
  return new BankApiError(500, 'internal_error', 'an unexpected error occurred');
}
