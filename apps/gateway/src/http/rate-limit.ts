import type { Next } from 'koa';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { ServiceError } from '@payments/contracts';
import type { GatewayContext } from './context';

/**
 * Per-tenant limit: a sustained rate per second plus a burst allowance (rate-limiter-flexible's
 * bursty limiter, which behaves like a token bucket). Counted per gateway instance.
 */
export function tenantRateLimit(perSecond: number, burst: number) {
  if (perSecond <= 0) return async (_ctx: GatewayContext, next: Next) => next();
  const limiter = new BurstyRateLimiter(
    new RateLimiterMemory({ keyPrefix: 'rps', points: perSecond, duration: 1 }),
    new RateLimiterMemory({
      keyPrefix: 'burst',
      points: Math.max(burst - perSecond, 0) || 1,
      duration: Math.max(1, Math.ceil(burst / perSecond)),
    }),
  );
  return async (ctx: GatewayContext, next: Next) => {
    const tenant = ctx.state.tenantId ?? ctx.ip;
    try {
      await limiter.consume(tenant);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      ctx.set('retry-after', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
      throw new ServiceError('rate_limited', `more than ${perSecond} requests per second for this tenant; retry later`);
    }
    await next();
  };
}
