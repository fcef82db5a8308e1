import { createHash } from 'node:crypto';
import type { Next } from 'koa';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { ServiceError } from '@payments/contracts';
import { bearerCredential } from './bearer';
import type { GatewayContext } from './context';

type Guard = (ctx: GatewayContext, next: Next) => Promise<unknown>;

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

/**
 * The client's address: the TCP peer, or with `trustedProxyHops` reverse proxies in front (each
 * appending the address it saw to X-Forwarded-For) the entry that many from the right. Entries
 * further left are whatever the client wrote, so they are never used as a key.
 */
export function clientAddress(ctx: GatewayContext, trustedProxyHops: number): string {
  const peer = ctx.req.socket.remoteAddress ?? 'unknown';
  if (trustedProxyHops <= 0) return peer;
  const forwarded = (ctx.get('x-forwarded-for') || '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  return forwarded[forwarded.length - trustedProxyHops] ?? forwarded[0] ?? peer;
}

/** A credential as a limiter key: its SHA-256, so the token itself is never held or shown. */
export function credentialKey(credential: string): string {
  return createHash('sha256').update(credential).digest('base64url');
}

/** What one limit counts: a key per request (none: not counted), `limit` per minute for each key. */
export interface MinuteLimit {
  /** Names the limit in the 429's detail, e.g. "authentication calls from this address". */
  what: string;
  perMinute: number;
  key(ctx: GatewayContext): string | undefined;
}

/**
 * A guard that counts requests per key in one-minute windows (per gateway instance) and answers
 * 429 rate_limited (problem+json, Retry-After in seconds) over any of the limits; every limit
 * counts the request. A limit of 0 is off.
 */
export function perMinuteLimit(limits: MinuteLimit[]): Guard {
  const active = limits
    .filter((limit) => limit.perMinute > 0)
    .map((limit) => ({
      limit,
      limiter: new RateLimiterMemory({ keyPrefix: limit.what, points: limit.perMinute, duration: 60 }),
    }));
  return async (ctx, next) => {
    for (const { limit, limiter } of active) {
      const key = limit.key(ctx);
      if (key === undefined) continue;
      try {
        await limiter.consume(key);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        ctx.set('retry-after', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
        throw new ServiceError('rate_limited', `more than ${limit.perMinute} ${limit.what} per minute; retry later`);
      }
    }
    return next();
  };
}

/** The settings the client limits read (GatewayConfig's rateLimit and trustedProxyHops). */
export interface ClientLimitSettings {
  rateLimit: { authPerMinute: number; authTokenPerMinute: number; downloadsPerMinute: number };
  trustedProxyHops: number;
}

/**
 * POST /authenticate and /refresh-token, one count for both: per client address, and per bearer
 * credential (its hash), so neither guessing tokens from one address nor hammering with one
 * token gets far.
 */
export function authRateLimit(settings: ClientLimitSettings): Guard {
  return perMinuteLimit([
    {
      what: 'authentication calls from this address',
      perMinute: settings.rateLimit.authPerMinute,
      key: (ctx) => clientAddress(ctx, settings.trustedProxyHops),
    },
    {
      what: 'authentication calls with this credential',
      perMinute: settings.rateLimit.authTokenPerMinute,
      key: (ctx) => {
        const credential = bearerCredential(ctx.get('authorization'));
        return credential === undefined ? undefined : credentialKey(credential);
      },
    },
  ]);
}

/** Signed downloads (booklets, slip PDFs, QR codes), one count for all, per client address. */
export function downloadRateLimit(settings: ClientLimitSettings): Guard {
  return perMinuteLimit([
    {
      what: 'downloads from this address',
      perMinute: settings.rateLimit.downloadsPerMinute,
      key: (ctx) => clientAddress(ctx, settings.trustedProxyHops),
    },
  ]);
}
