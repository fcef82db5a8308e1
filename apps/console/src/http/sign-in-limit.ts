import type { Context } from 'koa';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { ConsoleError } from './errors';

/** Too many refused sign-ins from one address: the page says when to try again (Retry-After too). */
export class TooManySignInsError extends ConsoleError {
  override readonly name = 'TooManySignInsError';
  constructor(readonly retryAfterSeconds: number) {
    super(429, `Too many refused sign-ins from your address; try again in ${retryAfterSeconds} s.`);
  }
}

/**
 * Refused sign-ins (a wrong integration token or operator credential) per client address per minute,
 * counted in this console instance (CONSOLE_SIGN_IN_FAILURES_PER_MINUTE; 0 turns it off). Only
 * refusals count, so a team signing in behind one NAT is not held up; a guesser gets that many tries
 * a minute. It also keeps one guesser from spending the gateway's per-address limit on
 * authentication, which every console user shares (the gateway sees the console's address).
 * The address is Koa's ctx.ip: with TRUSTED_PROXY_HOPS set, that many X-Forwarded-For entries from
 * the right.
 */
export class SignInLimit {
  private readonly limiter: RateLimiterMemory | undefined;

  constructor(private readonly failuresPerMinute: number) {
    this.limiter =
      failuresPerMinute > 0
        ? new RateLimiterMemory({ keyPrefix: 'console-sign-in', points: failuresPerMinute, duration: 60 })
        : undefined;
  }

  /** Throws TooManySignInsError (and sets Retry-After) when this address has no tries left. */
  async check(ctx: Context): Promise<void> {
    const used = await this.limiter?.get(ctx.ip);
    if (!used || used.consumedPoints < this.failuresPerMinute) return;
    const retryAfterSeconds = Math.max(1, Math.ceil(used.msBeforeNext / 1000));
    ctx.set('retry-after', String(retryAfterSeconds));
    throw new TooManySignInsError(retryAfterSeconds);
  }

  /** Counts a refused sign-in from this address. */
  async refused(ctx: Context): Promise<void> {
    await this.limiter?.penalty(ctx.ip, 1);
  }
}
