import bodyParser from 'koa-bodyparser';
import type { Next } from 'koa';
import { ServiceError } from '@payments/contracts';
import type { GatewayContext } from './context';

/**
 * Reads a JSON body: 413 when Content-Length announces more than the limit (before reading a byte)
 * or when the stream exceeds it, 415 for a body that is not JSON, 400 for malformed JSON.
 */
export function jsonBody(bodyLimitBytes: number) {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: `${bodyLimitBytes}b`, strict: true });
  return async (ctx: GatewayContext, next: Next) => {
    const announced = Number(ctx.get('content-length') || 0);
    if (announced > bodyLimitBytes)
      throw new ServiceError('payload_too_large', `the request body is larger than ${bodyLimitBytes} bytes`);
    if (hasBody(ctx) && !ctx.is('application/json', 'application/*+json')) {
      throw new ServiceError('unsupported_media_type', 'send the body as application/json');
    }
    await parse(ctx, next);
  };
}

function hasBody(ctx: GatewayContext): boolean {
  return Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
}

export function requestBody(ctx: GatewayContext): unknown {
  return (ctx.request as { body?: unknown }).body;
}
