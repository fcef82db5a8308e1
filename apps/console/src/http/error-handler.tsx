/** @jsxRuntime automatic @jsxImportSource preact */
import type { Context, Next } from 'koa';
import type { Logger } from '@payments/logger';
import { GatewayError, GatewayUnreachableError } from '../gateway/problem';
import { ErrorPage } from '../views/error-page';
import { formatsFor, localeOf } from '../views/locale';
import { render } from '../views/render';
import type { ConsoleState } from './context';
import { ConsoleError } from './errors';

const TITLES: Record<number, string> = {
  400: 'Check the form',
  401: 'Not signed in',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Not possible now',
  413: 'Too large',
  415: 'Unsupported form',
  422: 'Check the form',
  429: 'Too many requests',
  502: 'The gateway did not answer',
};

export interface ErrorHandlerDeps {
  logger: Logger;
  /** Ends the browser's session (the gateway no longer takes its JWT or credential). */
  endSession(ctx: Context): void;
  /** Shows a message on the next page. */
  flash(ctx: Context, kind: 'info' | 'error', text: string): void;
}

/**
 * Every failure as a page: a gateway refusal shows its status and its problem's detail and fields
 * (escaped like all text), the gateway out of reach is a 502, anything else a 500 without internals.
 * A 401 from the gateway means the session is over: it is ended and the browser sent to log in.
 */
export function errorHandler(deps: ErrorHandlerDeps) {
  return async (ctx: Context & { state: ConsoleState }, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined)
        page(ctx, 404, undefined, formatsFor(localeOf(ctx)).t('error.nothingHere'));
    } catch (err) {
      if (err instanceof GatewayError && err.status === 401 && ctx.state.session) {
        deps.endSession(ctx);
        deps.flash(ctx, 'error', formatsFor(localeOf(ctx)).t('session.ended'));
        ctx.redirect('/login');
        return;
      }
      if (err instanceof GatewayUnreachableError) {
        deps.logger.warn({ err, path: ctx.path }, 'the gateway is out of reach');
        page(ctx, 502, err, `${sentence(err.problem.detail)} Try again in a moment.`);
        return;
      }
      if (err instanceof GatewayError) {
        // The gateway's own failures are ours to report as a bad gateway; its refusals are the user's.
        const status = err.status >= 500 ? 502 : err.status;
        if (err.status >= 500) deps.logger.warn({ err, path: ctx.path }, 'the gateway failed a call');
        page(ctx, status, err);
        return;
      }
      if (err instanceof ConsoleError) {
        page(ctx, err.status, undefined, err.message);
        return;
      }
      deps.logger.error({ err, path: ctx.path }, 'console page failed');
      page(ctx, 500, undefined, formatsFor(localeOf(ctx)).t('error.internal'));
    }
  };
}

/** "the gateway did not answer in time" -> "The gateway did not answer in time." */
function sentence(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${text.endsWith('.') ? '' : '.'}`;
}

function page(ctx: Context & { state: ConsoleState }, status: number, err?: GatewayError, detail?: string): void {
  const title = err?.problem.title && status < 500 ? err.problem.title : (TITLES[status] ?? 'Error');
  render(
    ctx,
    <ErrorPage
      status={status}
      title={title}
      detail={detail}
      problem={err?.problem}
      session={ctx.state.session}
      flash={ctx.state.flash}
      path={ctx.path}
    />,
    status,
  );
}
