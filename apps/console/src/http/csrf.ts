import type { Context, Next } from 'koa';
import { ForbiddenError } from './errors';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Defence in depth against cross-site requests, beside the SameSite=Strict session cookie: a request
 * that changes anything must come from a page of this console. Browsers say so in Sec-Fetch-Site
 * (`same-origin`), judged by them against the address they reached, so it holds behind a proxy that
 * rewrites Host or terminates TLS; it decides when present. A browser that does not send it must
 * send an Origin naming this console. Under the pages' Referrer-Policy no-referrer, Chromium sends
 * `Origin: null` with a form's POST: Sec-Fetch-Site decides there. A POST with neither proof is
 * refused: no browser of ours sends that.
 */
export async function sameOriginOnly(ctx: Context, next: Next): Promise<void> {
  if (!SAFE.has(ctx.method)) {
    const origin = ctx.get('origin');
    const site = ctx.get('sec-fetch-site');
    if (site !== '') {
      if (site !== 'same-origin')
        throw new ForbiddenError('this form was sent from another site; open the console and try again');
    } else if (origin === '' || origin === 'null') {
      throw new ForbiddenError('a form of this console sends Sec-Fetch-Site or Origin; this request had neither');
    } else if (origin !== `${ctx.protocol}://${ctx.host}` && origin !== `https://${ctx.host}`) {
      // https too: behind a proxy that ends TLS (the Kubernetes Ingress) this server sees http.
      throw new ForbiddenError(`this form was sent from another site (${origin}); open the console and try again`);
    }
  }
  await next();
}
