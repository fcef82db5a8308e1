import type { Context, Next } from 'koa';
import { SESSION_ID_PATTERN, type ConsoleSession, type CurrentConsoleSession } from '@payments/contracts';
import { GatewayError } from '../gateway/problem';
import type { ConsoleState } from '../http/context';
import { clearCookie, readCookie, sessionCookieName, setCookie } from '../http/cookies';
import { formatsFor, localeOf } from '../views/locale';
import { sessionOf, type Session } from './session';
import type { SessionsApi } from './sessions-api';

export interface SessionStoreDeps {
  sessions: SessionsApi;
  /** Says on the next page that the session ended (the login page the guard sends the browser to). */
  flash(ctx: Context, kind: 'info' | 'error', text: string): void;
  secureCookies: boolean;
  now?: () => number;
}

const SESSION_ID = new RegExp(SESSION_ID_PATTERN);

/**
 * Sessions kept by the gateway: the cookie holds only the session id, and every request asks the
 * gateway for it (GET /admin/v1/sessions/current, which also moves the idle deadline and mints the
 * tenant's short JWT). Only the gateway's 401 ends a session here: a 429, a 5xx or no answer in time is
 * an error page, and the cookie stays for the next try.
 */
export class SessionStore {
  private readonly now: () => number;
  readonly cookieName: string;

  constructor(private readonly deps: SessionStoreDeps) {
    this.now = deps.now ?? Date.now;
    this.cookieName = sessionCookieName(deps.secureCookies);
  }

  middleware() {
    return async (ctx: Context & { state: ConsoleState }, next: Next) => {
      const sessionId = this.sessionIdOf(ctx);
      if (sessionId !== undefined) {
        ctx.state.session = await this.resolve(ctx, sessionId);
        if (!ctx.state.session) {
          this.clear(ctx);
          // Ended by the gateway (signed out elsewhere, expired, revoked): say so where the guard sends it.
          if (ctx.path !== '/login') this.deps.flash(ctx, 'error', formatsFor(localeOf(ctx)).t('session.ended'));
        }
      }
      await next();
    };
  }

  /** The cookie's session id when it looks like one; a value of another shape is deleted unasked. */
  sessionIdOf(ctx: Context): string | undefined {
    const value = readCookie(ctx, this.cookieName);
    if (value === undefined) return undefined;
    if (SESSION_ID.test(value)) return value;
    this.clear(ctx);
    return undefined;
  }

  /** After a sign-in: the cookie names the new session, until its absolute end. */
  save(ctx: Context, session: ConsoleSession): void {
    const secondsLeft = (Date.parse(session.expires_at) - this.now()) / 1000;
    setCookie(ctx, this.cookieName, session.session_id, {
      secure: this.deps.secureCookies,
      sameSite: 'Lax',
      maxAgeSeconds: Number.isFinite(secondsLeft) ? secondsLeft : undefined,
    });
  }

  /** Deletes the browser's cookie (the gateway ended the session, or the user signed out). */
  clear(ctx: Context): void {
    clearCookie(ctx, this.cookieName, this.deps.secureCookies, 'Lax');
    (ctx.state as ConsoleState).session = undefined;
  }

  /** The session, undefined once the gateway says it ended (401); any other failure is thrown. */
  private async resolve(ctx: Context, sessionId: string): Promise<Session | undefined> {
    let current: CurrentConsoleSession;
    try {
      current = await this.deps.sessions.current(ctx, sessionId);
    } catch (err) {
      if (err instanceof GatewayError && err.status === 401) return undefined;
      throw err;
    }
    const session = sessionOf(current);
    // An answer the pages cannot use (a tenant role without its JWT) is the gateway's fault, not an end.
    if (!session)
      throw new GatewayError('GET /admin/v1/sessions/current', 502, {
        title: 'Bad Gateway',
        status: 502,
        detail: 'the admin API answered a session without what its pages need',
      });
    return session;
  }
}
