/** @jsxRuntime automatic @jsxImportSource preact */
import type Router from '@koa/router';
import type { ConsoleState } from '../http/context';
import type { OperatorRouteDeps } from '../routes/operator-mount';
import { auditPage } from './audit-handlers';
import { deadLetterPage, deadLettersPage, discardDeadLetter, redriveDeadLetter } from './dead-letter-handlers';
import { operatorKit } from './handler-kit';
import { dashboardPage, healthPage } from './overview-handlers';
import { disableTenant, revokeToken, setProviderAccount, tenantPage, tenantsPage } from './tenant-handlers';
import { mountTenantSecretRoutes } from './tenant-secret-routes';

/**
 * The operator's pages, on the router with prefix /operator behind requireRole('operator')
 * (routes/operator-mount.ts). Every call to the admin API carries the operator's own credential; a
 * refusal reaches the error handler as an AdminApiError (a GatewayError) and is shown as the
 * problem page, a 401 ending the session. Actions are POSTs answered by a redirect with a flash
 * message, except those answering a secret, which is shown once on the answer page itself (never in
 * a cookie). The handlers are in one file per page.
 */
export function mountOperatorRoutes(router: Router<ConsoleState>, deps: OperatorRouteDeps): void {
  const kit = operatorKit(deps);

  // The dashboard has a path of its own, so the navigation marks it alone (not every /operator page).
  router.get('/', (ctx) => ctx.redirect(`/operator/dashboard${ctx.querystring ? `?${ctx.querystring}` : ''}`));
  router.get('/dashboard', (ctx) => dashboardPage(kit, ctx));
  router.get('/health', (ctx) => healthPage(kit, ctx));

  router.get('/tenants', (ctx) => tenantsPage(kit, ctx));
  // Create tenant, issue token, rotate secret: a confirmation page, then a POST carrying its Idempotency-Key.
  // Before /tenants/:tenant_id, so /tenants/new is not read as a tenant id.
  mountTenantSecretRoutes(router, kit);
  router.get('/tenants/:tenant_id', (ctx) => tenantPage(kit, ctx));
  router.post('/tenants/:tenant_id/disable', (ctx) => disableTenant(kit, ctx));
  router.post('/tokens/:token_id/revoke', (ctx) => revokeToken(kit, ctx));
  router.post('/tenants/:tenant_id/provider-account', (ctx) => setProviderAccount(kit, ctx));

  router.get('/dead-letters', (ctx) => deadLettersPage(kit, ctx));
  router.get('/dead-letters/:id', (ctx) => deadLetterPage(kit, ctx));
  router.post('/dead-letters/:id/redrive', (ctx) => redriveDeadLetter(kit, ctx));
  router.post('/dead-letters/:id/discard', (ctx) => discardDeadLetter(kit, ctx));

  router.get('/audit', (ctx) => auditPage(kit, ctx));
}
