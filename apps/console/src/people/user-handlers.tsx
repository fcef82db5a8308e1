/** @jsxRuntime automatic @jsxImportSource preact */
import {
  consoleInvitationPagePath,
  isUuid,
  TenantRoles,
  type NewInvitation,
  type TenantRole,
} from '@payments/contracts';
import type { ConsoleContext } from '../http/context';
import { BadInputError, NotFoundError } from '../http/errors';
import { readForm, single } from '../http/form';
import { operatorSession, tenantSession } from '../session/guards';
import { render } from '../views/render';
import { text } from './handler-kit';
import { InvitedPage, UsersPage, type PeoplePageFrame } from './pages/users-page';
import type { PeopleRouteDeps } from './routes';

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** GET /tenant/users: the tenant admin's users of their tenant. */
export async function tenantUsersPage(deps: PeopleRouteDeps, ctx: ConsoleContext): Promise<void> {
  const session = tenantSession(ctx);
  const { items } = await deps.people.tenantUsers(ctx, session.sessionId, session.tenantId);
  render(
    ctx,
    <UsersPage
      page={frame(ctx)}
      title={text(ctx, 'users.title')}
      users={items}
      inviteAction="/tenant/users/invite"
      roles={TenantRoles}
      revokeAction={(id) => `/tenant/users/${id}/revoke`}
    />,
  );
}

/** POST /tenant/users/invite: invites a user to the admin's tenant. */
export async function inviteTenantUser(deps: PeopleRouteDeps, ctx: ConsoleContext): Promise<void> {
  const session = tenantSession(ctx);
  const { email, role } = await inviteForm(ctx, true);
  const invitation = await deps.people.inviteToTenant(ctx, session.sessionId, session.tenantId, {
    email,
    role: role ?? 'tenant_viewer',
  });
  renderInvited(ctx, deps, invitation, '/tenant/users');
}

/** POST /tenant/users/:user_id/revoke. */
export async function revokeTenantUser(deps: PeopleRouteDeps, ctx: ConsoleContext): Promise<void> {
  await deps.people.revoke(ctx, tenantSession(ctx).sessionId, userIdOf(ctx));
  deps.flash(ctx, 'info', text(ctx, 'users.revokedFlash'));
  ctx.redirect('/tenant/users');
}

/** GET /operator/users: the operators, and a link to each tenant's users. */
export async function operatorUsersPage(deps: PeopleRouteDeps, ctx: ConsoleContext): Promise<void> {
  const sessionId = operatorSession(ctx).sessionId;
  const [{ items }, tenants] = await Promise.all([deps.people.operatorUsers(ctx, sessionId), deps.tenants(ctx)]);
  render(
    ctx,
    <UsersPage
      page={frame(ctx)}
      title={text(ctx, 'users.operatorTitle')}
      users={items}
      inviteAction="/operator/users/invite"
      revokeAction={(id) => `/operator/users/${id}/revoke?back=/operator/users`}
    >
      <h2>{text(ctx, 'users.tenantsHeading')}</h2>
      <ul id="tenant-users-links">
        {tenants.map((tenant) => (
          <li>
            <a href={`/operator/tenants/${tenant.tenant_id}/users`}>{tenant.name}</a>
          </li>
        ))}
      </ul>
    </UsersPage>,
  );
}

/** POST /operator/users/invite: invites an operator. */
export async function inviteOperator(deps: PeopleRouteDeps, ctx: ConsoleContext): Promise<void> {
  const { email } = await inviteForm(ctx, false);
  const invitation = await deps.people.inviteOperator(ctx, operatorSession(ctx).sessionId, email);
  renderInvited(ctx, deps, invitation, '/operator/users');
}

/** GET /operator/tenants/:tenant_id/users: a tenant's users, as the operator sees them. */
export async function operatorTenantUsersPage(deps: PeopleRouteDeps, ctx: ConsoleContext): Promise<void> {
  const tenantId = tenantIdOf(ctx);
  const sessionId = operatorSession(ctx).sessionId;
  const [{ items }, tenants] = await Promise.all([
    deps.people.tenantUsers(ctx, sessionId, tenantId),
    deps.tenants(ctx),
  ]);
  const name = tenants.find((t) => t.tenant_id === tenantId)?.name ?? tenantId;
  const back = `/operator/tenants/${tenantId}/users`;
  render(
    ctx,
    <UsersPage
      page={frame(ctx)}
      title={text(ctx, 'users.tenantTitle', { tenant: name })}
      users={items}
      inviteAction={`${back}/invite`}
      roles={TenantRoles}
      revokeAction={(id) => `/operator/users/${id}/revoke?back=${encodeURIComponent(back)}`}
    />,
  );
}

/** POST /operator/tenants/:tenant_id/users/invite: invites a user to that tenant. */
export async function inviteUserToTenant(deps: PeopleRouteDeps, ctx: ConsoleContext): Promise<void> {
  const tenantId = tenantIdOf(ctx);
  const { email, role } = await inviteForm(ctx, true);
  const invitation = await deps.people.inviteToTenant(ctx, operatorSession(ctx).sessionId, tenantId, {
    email,
    role: role ?? 'tenant_viewer',
  });
  renderInvited(ctx, deps, invitation, `/operator/tenants/${tenantId}/users`);
}

/** POST /operator/users/:user_id/revoke: then back to the page named by ?back= (an operator page). */
export async function revokeUserAsOperator(deps: PeopleRouteDeps, ctx: ConsoleContext): Promise<void> {
  await deps.people.revoke(ctx, operatorSession(ctx).sessionId, userIdOf(ctx));
  deps.flash(ctx, 'info', text(ctx, 'users.revokedFlash'));
  const back = single(ctx.query.back);
  ctx.redirect(back !== undefined && /^\/operator\/[A-Za-z0-9/_-]*$/.test(back) ? back : '/operator/users');
}

function renderInvited(ctx: ConsoleContext, deps: PeopleRouteDeps, invitation: NewInvitation, back: string): void {
  const origin = `${deps.secureCookies ? 'https' : ctx.protocol}://${ctx.host}`;
  const link = `${origin}${consoleInvitationPagePath(invitation.invitation_token)}`;
  render(ctx, <InvitedPage page={frame(ctx)} invitation={invitation} link={link} back={back} />, 201);
}

async function inviteForm(ctx: ConsoleContext, withRole: boolean): Promise<{ email: string; role?: TenantRole }> {
  const form = await readForm(ctx);
  const email = single(form.get('email'))?.trim() ?? '';
  if (!EMAIL.test(email)) throw new BadInputError('email', text(ctx, 'users.badEmail'));
  if (!withRole) return { email };
  const role = TenantRoles.find((r) => r === single(form.get('role')));
  if (role === undefined) throw new BadInputError('role', text(ctx, 'users.badRole'));
  return { email, role };
}

function frame(ctx: ConsoleContext): PeoplePageFrame {
  const session = ctx.state.session;
  if (!session) throw new NotFoundError();
  return { session, flash: ctx.state.flash, path: ctx.path };
}

function userIdOf(ctx: ConsoleContext): string {
  const id = ctx.params.user_id ?? '';
  if (!isUuid(id)) throw new NotFoundError();
  return id;
}

function tenantIdOf(ctx: ConsoleContext): string {
  const id = ctx.params.tenant_id ?? '';
  if (!isUuid(id)) throw new NotFoundError();
  return id;
}
