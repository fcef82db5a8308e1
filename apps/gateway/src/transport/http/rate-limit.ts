import { createHash } from 'node:crypto';
import type { Next } from 'koa';
import type { Kysely } from 'kysely';
import { ServiceError } from '@payments/contracts';
import { admitRequests, deleteFullBuckets } from '../../db/admit-requests';
import type { GatewayDatabase } from '../../db/schema';
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
 * costs 1,000), a search the rows it may answer, any other request 1. A token bucket of `burst`
 * charges refilled at `perSecond`, kept in Postgres (db/admit-requests.ts) so every gateway instance
 * spends the same budget. The API's operations pay one token as they arrive, before the body is read,
 * and the rest with their Idempotency-Key's claim once the input is valid (http/endpoint.ts,
 * http/admission.ts): a refused request leaves no trace. 0 per second turns it off. This is the
 * limit alone.
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
  /** Names its buckets (`<bucket>:<key>` in rate_limit_buckets), e.g. `auth-address`. */
  bucket: string;
  perMinute: number;
  key(ctx: GatewayContext): string | undefined;
}

/**
 * How often an instance clears the client limits' idle buckets. Their keys are addresses and
 * credential hashes, which anyone can vary, so their rows are removed once they would be full again.
 */
const IDLE_SWEEP_EVERY_MS = 10 * 60_000;

/**
 * A guard that counts requests per key, every limit in turn, and answers 429 rate_limited
 * (problem+json, Retry-After in seconds) over any of them. Each key has a token bucket of `perMinute`
 * refilled at `perMinute` a minute, in Postgres beside the tenants' (db/admit-requests.ts), so every
 * gateway instance counts the same calls: a client spreading its calls over the instances behind a
 * load balancer gets no more than from one. A limit of 0 is off.
 */
export function perMinuteLimit(db: Kysely<GatewayDatabase>, limits: MinuteLimit[]): Guard {
  const active = limits.filter((limit) => limit.perMinute > 0);
  let nextSweep = 0;
  return async (ctx, next) => {
    if (active.length > 0 && Date.now() >= nextSweep) {
      nextSweep = Date.now() + IDLE_SWEEP_EVERY_MS;
      await deleteFullBuckets(
        db,
        active.map((limit) => limit.bucket),
        MINUTE_MS,
      );
    }
    for (const limit of active) {
      const key = limit.key(ctx);
      if (key === undefined) continue;
      const shape = { perSecond: limit.perMinute / 60, burst: limit.perMinute };
      const [answer] = await admitRequests(db, [{ bucket: `${limit.bucket}:${key}`, cost: 1 }], shape, new Date(), 0);
      if (answer.taken) continue;
      ctx.set('retry-after', String(Math.max(1, Math.ceil(answer.retryAfterMs / 1000))));
      throw new ServiceError('rate_limited', `more than ${limit.perMinute} ${limit.what} per minute; retry later`);
    }
    return next();
  };
}

/** A minute bucket left alone this long is full again: removing it changes nothing. */
const MINUTE_MS = 60_000;

/** The settings the client limits read (GatewayConfig's rateLimit and trustedProxyHops). */
export interface ClientLimitSettings {
  rateLimit: { authPerMinute: number; authTokenPerMinute: number; downloadsPerMinute: number };
  trustedProxyHops: number;
}

/**
 * POST /authenticate and /refresh-token, one count for both: per client address, and per bearer
 * credential (its hash), so neither guessing tokens from one address nor hammering with one
 * token gets far. Shared by every gateway instance.
 */
export function authRateLimit(db: Kysely<GatewayDatabase>, settings: ClientLimitSettings): Guard {
  return perMinuteLimit(db, [
    {
      what: 'authentication calls from this address',
      bucket: 'auth-address',
      perMinute: settings.rateLimit.authPerMinute,
      key: (ctx) => clientAddress(ctx, settings.trustedProxyHops),
    },
    {
      what: 'authentication calls with this credential',
      bucket: 'auth-credential',
      perMinute: settings.rateLimit.authTokenPerMinute,
      key: (ctx) => {
        const credential = bearerCredential(ctx.get('authorization'));
        return credential === undefined ? undefined : credentialKey(credential);
      },
    },
  ]);
}

/** Signed downloads (booklets, slip PDFs, QR codes), one count for all, per client address, shared by every instance. */
export function downloadRateLimit(db: Kysely<GatewayDatabase>, settings: ClientLimitSettings): Guard {
  return perMinuteLimit(db, [
    {
      what: 'downloads from this address',
      bucket: 'download-address',
      perMinute: settings.rateLimit.downloadsPerMinute,
      key: (ctx) => clientAddress(ctx, settings.trustedProxyHops),
    },
  ]);
}
