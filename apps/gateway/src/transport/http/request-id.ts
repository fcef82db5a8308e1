import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { GatewayContext } from './context';

/** Every response carries X-Request-Id (the caller's, when it sent a sane one). */
export async function requestId(ctx: GatewayContext, next: Next): Promise<void> {
  const given = ctx.get('x-request-id');
  ctx.state.requestId = /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
  ctx.set('x-request-id', ctx.state.requestId);
  await next();
}
