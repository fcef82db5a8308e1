import type { Context, Next } from 'koa';
import { ForbiddenError } from './errors';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Defence in depth against cross-site requests, beside the SameSite=Strict session cookie: a request
 * that changes anything must come from a page of this console. Browsers send Sec-Fetch-Site on every
 * request, which must say same-origin; and Origin, which must be ours when it names one (under the
 * pages' Referrer-Policy no-referrer, Chromium sends `Origin: null` with a form's POST, so null defers
 * to Sec-Fetch-Site). A POST carrying neither proof is refused: no browser of ours sends that.
 */
export async function sameOriginOnly(ctx: Context, next: Next): Promise<void> {
  if (!SAFE.has(ctx.method)) {
    const origin = ctx.get('origin');
    const site = ctx.get('sec-fetch-site');
    const ownOrigin = `${ctx.protocol}://${ctx.host}`;
    const namedOrigin = origin !== '' && origin !== 'null';
    if (namedOrigin && origin !== ownOrigin)
      throw new ForbiddenError(`this form was sent from another site (${origin}); open the console and try again`);
    if (site !== '' && site !== 'same-origin')
      throw new ForbiddenError('this form was sent from another site; open the console and try again');
    if (!namedOrigin && site === '')
      throw new ForbiddenError('a form of this console sends Origin or Sec-Fetch-Site; this request had neither');
  }
  await next();
}
