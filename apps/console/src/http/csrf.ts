import type { Context, Next } from 'koa';
import { ForbiddenError } from './errors';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Defence in depth against cross-site requests, beside the SameSite=Strict session cookie: a request
 * that changes anything must come from a page of this console. Browsers send Origin on every POST
 * (and Sec-Fetch-Site): a foreign Origin, or a cross-site fetch, is refused; so is a POST carrying
 * neither (no browser of ours sends that).
 */
export async function sameOriginOnly(ctx: Context, next: Next): Promise<void> {
  if (!SAFE.has(ctx.method)) {
    const origin = ctx.get('origin');
    const site = ctx.get('sec-fetch-site');
    const ownOrigin = `${ctx.protocol}://${ctx.host}`;
    if (origin !== '' && origin !== ownOrigin)
      throw new ForbiddenError(`this form was sent from another site (${origin}); open the console and try again`);
    if (site !== '' && site !== 'same-origin')
      throw new ForbiddenError('this form was sent from another site; open the console and try again');
    if (origin === '' && site === '')
      throw new ForbiddenError('a form of this console sends an Origin header; this request had none');
  }
  await next();
}
