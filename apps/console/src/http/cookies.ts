import type { Context } from 'koa';

export const SESSION_COOKIE = 'console_session';
export const FLASH_COOKIE = 'console_flash';

export interface CookieOptions {
  /** Mark it Secure (CONSOLE_SECURE_COOKIES: the console is reached over https). */
  secure: boolean;
  /** Seconds it lives in the browser; 0 deletes it. */
  maxAgeSeconds: number;
}

/**
 * Sets a cookie HttpOnly, SameSite=Strict, Path=/. Written by hand rather than with ctx.cookies.set,
 * which refuses Secure over a plain-http hop (a TLS-terminating proxy in front): the setting decides.
 */
export function setCookie(ctx: Context, name: string, value: string, options: CookieOptions): void {
  const parts = [
    `${name}=${value}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
  ];
  if (options.secure) parts.push('Secure');
  const previous = ctx.response.get('set-cookie');
  const kept = (Array.isArray(previous) ? previous : previous ? [previous] : []).filter(
    (c) => !c.startsWith(`${name}=`),
  );
  ctx.set('set-cookie', [...kept, parts.join('; ')]);
}

export function clearCookie(ctx: Context, name: string, secure: boolean): void {
  setCookie(ctx, name, '', { secure, maxAgeSeconds: 0 });
}

/** A cookie's value as the browser sent it (our values are base64url and dots: no decoding). */
export function readCookie(ctx: Context, name: string): string | undefined {
  return ctx.cookies.get(name) || undefined;
}
