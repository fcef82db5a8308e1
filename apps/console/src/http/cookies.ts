import type { Context } from 'koa';

/**
 * The session cookie holds only the gateway's opaque session id. Served over https (the production
 * default) it is `__Host-console_session`: the browser then refuses it unless it is Secure, has Path=/
 * and names no Domain, so no sibling host or plain-http page can plant or overwrite it. Over plain http
 * (development) browsers refuse the prefix, so it is plain `console_session`.
 */
export const SESSION_COOKIE = 'console_session';
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
export const FLASH_COOKIE = 'console_flash';

/** The session cookie's name under the console's cookie setting. */
export function sessionCookieName(secure: boolean): string {
  return secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

export interface CookieOptions {
  /** Mark it Secure (CONSOLE_SECURE_COOKIES: the console is reached over https). */
  secure: boolean;
  /** Seconds it lives in the browser; 0 deletes it; undefined: until the browser closes. */
  maxAgeSeconds?: number;
  /**
   * Strict by default. The session cookie is Lax: a link from a mail or a chat to a console page then
   * opens it signed in; forms that change anything are still checked by sameOriginOnly.
   */
  sameSite?: 'Strict' | 'Lax';
}

/**
 * Sets a cookie HttpOnly, Path=/. Written by hand rather than with ctx.cookies.set, which refuses
 * Secure over a plain-http hop (a TLS-terminating proxy in front): the setting decides.
 */
export function setCookie(ctx: Context, name: string, value: string, options: CookieOptions): void {
  const parts = [`${name}=${value}`, 'Path=/', 'HttpOnly', `SameSite=${options.sameSite ?? 'Strict'}`];
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`);
  if (options.secure) parts.push('Secure');
  const previous = ctx.response.get('set-cookie');
  const kept = (Array.isArray(previous) ? previous : previous ? [previous] : []).filter(
    (c) => !c.startsWith(`${name}=`),
  );
  ctx.set('set-cookie', [...kept, parts.join('; ')]);
}

export function clearCookie(ctx: Context, name: string, secure: boolean, sameSite?: 'Strict' | 'Lax'): void {
  setCookie(ctx, name, '', { secure, maxAgeSeconds: 0, sameSite });
}

/** A cookie's value as the browser sent it (our values are base64url and dots: no decoding). */
export function readCookie(ctx: Context, name: string): string | undefined {
  return ctx.cookies.get(name) || undefined;
}
