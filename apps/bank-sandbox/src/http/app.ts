import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import { mountChargeRoutes } from './charge-routes';
import type { SandboxDeps } from './context';
import { BankApiError, errorHandler } from './errors';
import { mountSandboxRoutes } from './sandbox-routes';

/** The sandbox's HTTP app: the bank-like API under /v1, the controls under /sandbox, /healthz. */
export function createSandboxApp(deps: SandboxDeps): Koa {
  const app = new Koa();
  app.use(errorHandler(deps.logger));
  app.use(downMode(deps));
  app.use(bodyParser({ enableTypes: ['json'], strict: true, jsonLimit: '4mb' }));
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok', mode: deps.behaviour.mode };
  });
  mountSandboxRoutes(router, deps);
  mountChargeRoutes(router, deps);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** "down": the bank answers 503 to everything but its sandbox controls and health check. */
function downMode(deps: SandboxDeps) {
  return async (ctx: Context, next: Next) => {
    if (deps.behaviour.mode === 'down' && !ctx.path.startsWith('/sandbox/') && ctx.path !== '/healthz') {
      throw new BankApiError(503, 'unavailable', 'the bank is down (sandbox behaviour "down")');
    }
    await next();
  };
}
