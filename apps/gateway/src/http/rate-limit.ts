import { createHash } from 'node:crypto';
import type { Next } from 'koa';
import type { Kysely } from 'kysely';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { ServiceError } from '@payments/contracts';
import type { GatewayDatabase } from '../db/schema';
import { Admissions } from './admission';
import { bearerCredential } from './bearer';
import type { GatewayContext } from './context';

type Guard = (ctx: GatewayContext, next: Next) => Promise<unknown>;

/** A tenant's charge budget (GatewayConfig's rateLimit: RATE_LIMIT_PER_SECOND, RATE_LIMIT_BURST). */
export interface ChargeLimitSettings {
  perSecond: number;
  burst: number;
}

/** Takes `charges` from the request's tenant's budget, or throws 429 rate_limited. */
export type ChargeLimit = (ctx: GatewayContext, charges: number) => Promise<void>;

/**
 * Per-tenant limit on charges: a request costs the charges it creates (a batch of 1,000
 * costs 1,000), any other request 1. A token bucket of `burst` charges refilled at `perSecond`, kept
 * in Postgres (db/admit-requests.ts) so every gateway instance spends the same budget. Taken
 * after the body is validated and before anything is stored: a refused request leaves no trace. 0 per
 * second turns it off. The API's operations take it through their admission (http/admission.ts),
 * together with their Idempotency-Key; this is the limit alone.
 */
export function tenantChargeLimit(db: Kysely<GatewayDatabase>, settings: ChargeLimitSettings): ChargeLimit {
  const admissions = new Admissions(db, settings);
  return async (ctx, charges) => {
    await admissions.admit(ctx, charges);
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
