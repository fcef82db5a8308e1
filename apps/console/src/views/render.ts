import type { Context } from 'koa';
import { h, type VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { formatsFor, LocaleContext, localeOf } from './locale';

/**
 * Answers an HTML page rendered on the server, in the request's language (the `lang` cookie): the
 * page and its layout read it with useFormats(). preact-render-to-string escapes every string it
 * interpolates (text and attribute values), so data from the gateway (payer names, receivers'
 * answers, tenant names) can never become markup; no component uses dangerouslySetInnerHTML.
 */
export function render(ctx: Context, page: VNode, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  const localized = h(LocaleContext.Provider, { value: formatsFor(localeOf(ctx)) }, page);
  ctx.body = `<!doctype html>${renderToString(localized)}`;
}
