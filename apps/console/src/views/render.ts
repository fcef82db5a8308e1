import type { Context } from 'koa';
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/**
 * Answers an HTML page rendered on the server. preact-render-to-string escapes every string it
 * interpolates (text and attribute values), so data from the gateway (payer names, receivers'
 * answers, tenant names) can never become markup; no component uses dangerouslySetInnerHTML.
 */
export function render(ctx: Context, page: VNode, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html>${renderToString(page)}`;
}
