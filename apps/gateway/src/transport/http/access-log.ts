import type { Next } from 'koa';
import type { Logger } from '@payments/logger';
import type { GatewayContext } from './context';

/** Probes and scrapes would drown the log. */
const QUIET_PATHS = /^\/(healthz|readyz|metrics)$/;

/**
 * One line per API request, after the answer: method, route template, status, duration, request id
 * and tenant. Written inside the request's span, so it carries the trace id too (libs/logger), and
 * an operator can go from an ERP's X-Request-Id to the whole trace.
 */
export function accessLog(logger: Logger) {
  return async (ctx: GatewayContext, next: Next): Promise<void> => {
    const started = performance.now();
    try {
      await next();
    } finally {
      if (!QUIET_PATHS.test(ctx.path)) {
        logger.info(
          {
            method: ctx.method,
            route: ctx._matchedRoute ?? ctx.path,
            status: ctx.status,
            duration_ms: Math.round(performance.now() - started),
            request_id: ctx.state.requestId,
            tenant_id: ctx.state.tenantId,
          },
          'request',
        );
      }
    }
  };
}
