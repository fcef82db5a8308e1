import type { Context, Next } from 'koa';

/** The helpers of the dialects' controls on the main port (the Inter and PIX ones answer alike). */

/** The JSON object sent, or {} when there is none. */
export function body(ctx: Context): Record<string, unknown> {
  const value = (ctx.request as { body?: unknown }).body;
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export class ControlError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function fail(ctx: Context, status: number, code: string, message: string): void {
  ctx.status = status;
  ctx.body = { error: { code, message } };
}

/** The sandbox's own error shape `{ error: { code, message } }` for the controls. */
export async function errors(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) fail(ctx, 404, 'not_found', `no route ${ctx.method} ${ctx.path}`);
  } catch (err) {
    if (err instanceof ControlError) return fail(ctx, err.status, err.code, err.message);
    const status = (err as { status?: number }).status;
    if (status === 400) return fail(ctx, 400, 'malformed_json', 'the request body is not valid JSON');
    throw err;
  }
}
