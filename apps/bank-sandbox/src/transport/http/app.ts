import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import { READYZ_PATH, readinessHandler } from '@payments/health';
import { httpMetrics, metricsHandler, METRICS_PATH } from '@payments/metrics';
import { mountChargeRoutes } from './charge-routes';
import type { SandboxDeps } from './context';
import { BankApiError, errorHandler } from './errors';
import { mountSandboxRoutes } from './sandbox-routes';

/** The sandbox's HTTP app: the bank-like API under /v1, the controls under /sandbox, /healthz, /readyz, /metrics. */
export function createSandboxApp(deps: SandboxDeps): Koa {
  const app = new Koa();
  app.use(httpMetrics(deps.metrics));
  app.use(errorHandler(deps.logger));
  app.use(downMode(deps));
  app.use(bodyParser({ enableTypes: ['json'], strict: true, jsonLimit: '4mb' }));
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok', mode: deps.behaviour.mode };
  });
  router.get(READYZ_PATH, readinessHandler({ checks: deps.readiness }));
  router.get(METRICS_PATH, metricsHandler(deps.metrics));
  mountSandboxRoutes(router, deps);
  mountChargeRoutes(router, deps);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** "down": the bank answers 503 to everything but its sandbox controls and ops routes (they report on the process, not the simulated bank). */
const OPS_PATHS: ReadonlySet<string> = new Set(['/healthz', READYZ_PATH, METRICS_PATH]);

function downMode(deps: SandboxDeps) {
  return async (ctx: Context, next: Next) => {
    if (deps.behaviour.mode === 'down' && !ctx.path.startsWith('/sandbox/') && !OPS_PATHS.has(ctx.path)) {
      throw new BankApiError(503, 'unavailable', 'the bank is down (sandbox behaviour "down")');
    }
    await next();
  };
}
