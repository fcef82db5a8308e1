import Router from '@koa/router';
import type { Logger } from '@payments/logger';
import type { AdminApi } from '../operator/admin-client';
import type { ConsoleContext, ConsoleState } from '../http/context';
import { mountOperatorRoutes } from '../operator/routes';
import { requireRole } from '../session/guards';

/** What the operator pages get (apps/console/src/operator/routes.tsx). */
export interface OperatorRouteDeps {
  /** The admin API (GATEWAY_ADMIN_URL) as the operator of this request's session. */
  admin(ctx: ConsoleContext): AdminApi;
  /** Shows a message on the next page (after a POST's redirect). */
  flash(ctx: ConsoleContext, kind: 'info' | 'error', text: string): void;
  logger: Logger;
}

/**
 * The mount point of the operator pages: a router with prefix /operator whose every route runs behind
 * requireRole('operator'), so no operator page can be served to a tenant or to nobody by mistake.
 * (The login form is /login, outside it.)
 */
export function operatorRouter(deps: OperatorRouteDeps): Router<ConsoleState> {
  const router = new Router<ConsoleState>({ prefix: '/operator' });
  router.use(requireRole('operator'));
  mountOperatorRoutes(router, deps);
  return router;
}
