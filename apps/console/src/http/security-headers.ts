import type { Context, Next } from 'koa';

/**
 * The Content-Security-Policy of every answer: no script at all (the console has no client-side
 * JavaScript), styles only from the console's own stylesheet, no inline style or handler attribute,
 * forms posting only back here, and no framing. Even a markup injection that escaped the JSX
 * escaping could then run nothing.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** CSP and the other security headers on every answer; pages (not the stylesheet) are never cached. */
export async function securityHeaders(ctx: Context, next: Next): Promise<void> {
  ctx.set('content-security-policy', CONTENT_SECURITY_POLICY);
  ctx.set('x-content-type-options', 'nosniff');
  ctx.set('referrer-policy', 'no-referrer');
  ctx.set('x-frame-options', 'DENY');
  ctx.set('cross-origin-opener-policy', 'same-origin');
  ctx.set('cross-origin-resource-policy', 'same-origin');
  ctx.set('permissions-policy', 'camera=(), microphone=(), geolocation=(), payment=()');
  // Before next(): an error page rendered downstream keeps it; the stylesheet route overrides it.
  ctx.set('cache-control', 'no-store');
  await next();
}
