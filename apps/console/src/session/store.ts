import type { Context, Next } from 'koa';
import type { ConsoleState } from '../http/context';
import { clearCookie, readCookie, SESSION_COOKIE, setCookie } from '../http/cookies';
import { refresh, type PublicApi } from '../gateway/public-api';
import { OPERATOR_ABSOLUTE_MS, touchOperator, type Session, type SessionCodec, type TenantSession } from './codec';

/** Refresh a tenant's JWT when less than this is left of it (or half its lifetime, if shorter). */
const REFRESH_MARGIN_MS = 5 * 60_000;

export interface SessionStoreDeps {
  codec: SessionCodec;
  api: PublicApi;
  secureCookies: boolean;
  now?: () => number;
}

/**
 * Sessions kept in the browser, sealed: opens the cookie into ctx.state.session, renews a tenant's
 * JWT shortly before it expires (POST /refresh-token: the session lives as long as that chain does),
 * and moves an operator's idle deadline. A cookie that does not open is deleted.
 */
export class SessionStore {
  private readonly now: () => number;

  constructor(private readonly deps: SessionStoreDeps) {
    this.now = deps.now ?? Date.now;
  }

  middleware() {
    return async (ctx: Context & { state: ConsoleState }, next: Next) => {
      const value = readCookie(ctx, SESSION_COOKIE);
      let session = this.deps.codec.open(value);
      if (value && !session) this.clear(ctx);
      if (session?.role === 'tenant' && this.dueForRefresh(session)) {
        session = await this.refreshed(session);
        if (session) this.save(ctx, session);
        else this.clear(ctx);
      } else if (session?.role === 'operator') {
        session = touchOperator(session, this.now());
        this.save(ctx, session);
      }
      ctx.state.session = session;
      await next();
    };
  }

  save(ctx: Context, session: Session): void {
    const end = session.role === 'tenant' ? session.expiresAt : session.startedAt + OPERATOR_ABSOLUTE_MS;
    setCookie(ctx, SESSION_COOKIE, this.deps.codec.seal(session), {
      secure: this.deps.secureCookies,
      maxAgeSeconds: (end - this.now()) / 1000,
    });
    (ctx.state as ConsoleState).session = session;
  }

  clear(ctx: Context): void {
    clearCookie(ctx, SESSION_COOKIE, this.deps.secureCookies);
    (ctx.state as ConsoleState).session = undefined;
  }

  private dueForRefresh(session: TenantSession): boolean {
    const margin = Math.min(REFRESH_MARGIN_MS, (session.expiresAt - session.issuedAt) / 2);
    return session.expiresAt - this.now() < margin;
  }

  private async refreshed(session: TenantSession): Promise<TenantSession | undefined> {
    const token = await refresh(this.deps.api, session.jwt).catch(() => undefined);
    if (!token || token.tenantId !== session.tenantId) return undefined;
    return {
      role: 'tenant',
      jwt: token.jwt,
      tenantId: token.tenantId,
      issuedAt: token.issuedAt,
      expiresAt: token.expiresAt,
    };
  }
}
