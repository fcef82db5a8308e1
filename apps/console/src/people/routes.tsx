/** @jsxRuntime automatic @jsxImportSource preact */
import Router from '@koa/router';
import type { ConsoleContext, ConsoleState } from '../http/context';
import { requireRole, requireTenantAdmin } from '../session/guards';
import type { AdminSchemas } from '../operator/admin-client';
import { acceptInvitation, invitationPage } from './invitation-handlers';
import type { PeopleApi } from './people-api';
import {
  inviteOperator,
  inviteTenantUser,
  inviteUserToTenant,
  operatorTenantUsersPage,
  operatorUsersPage,
  revokeTenantUser,
  revokeUserAsOperator,
  tenantUsersPage,
} from './user-handlers';

export interface PeopleRouteDeps {
  people: PeopleApi;
  flash(ctx: ConsoleContext, kind: 'info' | 'error', text: string): void;
  /** Served over https: the invitation link shown once is written with it. */
  secureCookies: boolean;
  /** The tenants an operator may open the users of (GET /admin/v1/tenants as that operator). */
  tenants(ctx: ConsoleContext): Promise<ReadonlyArray<AdminSchemas['AdminTenant']>>;
}

/**
 * The people pages: an invitation opened from its link (no session), the tenant admin's users of
 * their tenant, and the operator's users (operators, and each tenant's users). Invitations are shown
 * once, on the page that answers the invite form.
 */
export function peopleRouters(deps: PeopleRouteDeps): Array<Router<ConsoleState>> {
  const invitations = new Router<ConsoleState>();
  mountInvitationRoutes(invitations, deps);
  // Each router's guards run only for its own routes: one per role, as the tenant and operator mounts.
  const tenant = new Router<ConsoleState>({ prefix: '/tenant/users' });
  tenant.use(requireRole('tenant'), requireTenantAdmin());
  mountTenantUserRoutes(tenant, deps);
  const operator = new Router<ConsoleState>({ prefix: '/operator' });
  operator.use(requireRole('operator'));
  mountOperatorUserRoutes(operator, deps);
  return [invitations, tenant, operator];
}

function mountInvitationRoutes(router: Router<ConsoleState>, deps: PeopleRouteDeps): void {
  router.get('/invitations/:token', (ctx) => invitationPage(deps, ctx));
  router.post('/invitations/:token', (ctx) => acceptInvitation(deps, ctx));
}

function mountTenantUserRoutes(router: Router<ConsoleState>, deps: PeopleRouteDeps): void {
  router.get('/', (ctx) => tenantUsersPage(deps, ctx));
  router.post('/invite', (ctx) => inviteTenantUser(deps, ctx));
  router.post('/:user_id/revoke', (ctx) => revokeTenantUser(deps, ctx));
}

function mountOperatorUserRoutes(router: Router<ConsoleState>, deps: PeopleRouteDeps): void {
  router.get('/users', (ctx) => operatorUsersPage(deps, ctx));
  router.post('/users/invite', (ctx) => inviteOperator(deps, ctx));
  router.get('/tenants/:tenant_id/users', (ctx) => operatorTenantUsersPage(deps, ctx));
  router.post('/tenants/:tenant_id/users/invite', (ctx) => inviteUserToTenant(deps, ctx));
  router.post('/users/:user_id/revoke', (ctx) => revokeUserAsOperator(deps, ctx));
}
