import Router from '@koa/router';
import type { Logger } from '@payments/logger';
import type { PublicApi } from '../gateway/public-api';
import type { ConsoleContext, ConsoleState } from '../http/context';
import { requireRole, viewersRead } from '../session/guards';
import { mountTenantRoutes } from './routes';

export interface TenantRouteDeps {
  /** The public API; every call carries tenantSession(ctx).jwt. */
  api: PublicApi;
  /** GATEWAY_URL: booklet downloads are fetched from it (and only from it). */
  gatewayUrl: string;
  /** The deadline of one gateway call (ConsoleConfig.gatewayTimeoutMs). */
  gatewayTimeoutMs: number;
  flash(ctx: ConsoleContext, kind: 'info' | 'error', text: string): void;
  logger: Logger;
}

/** The tenant pages: prefix /tenant, every route behind requireRole('tenant'); a viewer only reads. */
export function tenantRouter(deps: TenantRouteDeps): Router<ConsoleState> {
  const router = new Router<ConsoleState>({ prefix: '/tenant' });
  router.use(requireRole('tenant'));
  router.use(viewersRead());
  mountTenantRoutes(router, deps);
  return router;
}
