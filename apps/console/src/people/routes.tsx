/** @jsxRuntime automatic @jsxImportSource preact */
import Router from '@koa/router';
import QRCode from 'qrcode';
import {
  consoleInvitationPagePath,
  INVITATION_TOKEN_PATTERN,
  isUuid,
  TenantRoles,
  type NewInvitation,
  type TenantRole,
} from '@payments/contracts';
import { GatewayError } from '../gateway/problem';
import type { ConsoleContext, ConsoleState } from '../http/context';
import { BadInputError, NotFoundError } from '../http/errors';
import { readForm, single } from '../http/form';
import { operatorSession, requireRole, requireTenantAdmin, tenantSession } from '../session/guards';
import { formatsFor, localeOf } from '../views/locale';
import type { MessageKey } from '../views/messages';
import { render } from '../views/render';
import type { AdminSchemas } from '../operator/admin-client';
import { InvitationPage } from './pages/invitation-page';
import { InvitedPage, UsersPage, type PeoplePageFrame } from './pages/users-page';
import type { PeopleApi } from './people-api';

export interface PeopleRouteDeps {
  people: PeopleApi;
  flash(ctx: ConsoleContext, kind: 'info' | 'error', text: string): void;
  /** Served over https: the invitation link shown once is written with it. */
  secureCookies: boolean;
  /** The tenants an operator may open the users of (GET /admin/v1/tenants as that operator). */
  tenants(ctx: ConsoleContext): Promise<ReadonlyArray<AdminSchemas['AdminTenant']>>;
}

const INVITATION_TOKEN = new RegExp(INVITATION_TOKEN_PATTERN);
const EMAIL = /^[^\s@]+@[^\s@]+$/;

const text = (ctx: ConsoleContext, key: MessageKey, vars?: Record<string, string | number>) =>
  formatsFor(localeOf(ctx)).t(key, vars);

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
  router.get('/invitations/:token', async (ctx) => {
    await renderInvitation(ctx, deps, tokenOf(ctx));
  });

  router.post('/invitations/:token', async (ctx) => {
    const token = tokenOf(ctx);
    const form = await readForm(ctx);
    const name = single(form.get('name'))?.trim() ?? '';
    const body = { name, password: single(form.get('password')) ?? '', totp: single(form.get('totp'))?.trim() ?? '' };
    try {
      const accepted = await deps.people.accept(ctx, token, body);
      deps.flash(ctx, 'info', text(ctx, 'invitation.accepted', { email: accepted.email }));
      ctx.redirect('/login');
    } catch (err) {
      // A wrong code or a short password: the same page again, the gateway naming the field.
      if (err instanceof GatewayError && (err.status === 400 || err.status === 422))
        return renderInvitation(ctx, deps, token, { error: refusalText(err), name }, err.status);
      throw err;
    }
  });
}

async function renderInvitation(
  ctx: ConsoleContext,
  deps: PeopleRouteDeps,
  token: string,
  retry: { error?: string; name?: string } = {},
  status = 200,
): Promise<void> {
  const invitation = await deps.people.invitation(ctx, token).catch((err: unknown) => {
    if (err instanceof GatewayError && err.status === 404) throw new NotFoundError(text(ctx, 'invitation.gone'));
    throw err;
  });
  // An SVG as a data: URL: drawn on the server, shown under the CSP (img-src data:), no script.
  const svg = await QRCode.toString(invitation.otpauth_uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  const qrDataUrl = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
  render(
    ctx,
    <InvitationPage
      invitation={invitation}
      qrDataUrl={qrDataUrl}
      action={consoleInvitationPagePath(token)}
      flash={ctx.state.flash}
      {...retry}
    />,
    status,
  );
}

function mountTenantUserRoutes(router: Router<ConsoleState>, deps: PeopleRouteDeps): void {
  router.get('/', async (ctx) => {
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
  });

  router.post('/invite', async (ctx) => {
    const session = tenantSession(ctx);
    const { email, role } = await inviteForm(ctx, true);
    const invitation = await deps.people.inviteToTenant(ctx, session.sessionId, session.tenantId, {
      email,
      role: role ?? 'tenant_viewer',
    });
    renderInvited(ctx, deps, invitation, '/tenant/users');
  });

  router.post('/:user_id/revoke', async (ctx) => {
    await deps.people.revoke(ctx, tenantSession(ctx).sessionId, userIdOf(ctx));
    deps.flash(ctx, 'info', text(ctx, 'users.revokedFlash'));
    ctx.redirect('/tenant/users');
  });
}

function mountOperatorUserRoutes(router: Router<ConsoleState>, deps: PeopleRouteDeps): void {
  router.get('/users', async (ctx) => {
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
  });

  router.post('/users/invite', async (ctx) => {
    const { email } = await inviteForm(ctx, false);
    const invitation = await deps.people.inviteOperator(ctx, operatorSession(ctx).sessionId, email);
    renderInvited(ctx, deps, invitation, '/operator/users');
  });

  router.get('/tenants/:tenant_id/users', async (ctx) => {
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
  });

  router.post('/tenants/:tenant_id/users/invite', async (ctx) => {
    const tenantId = tenantIdOf(ctx);
    const { email, role } = await inviteForm(ctx, true);
    const invitation = await deps.people.inviteToTenant(ctx, operatorSession(ctx).sessionId, tenantId, {
      email,
      role: role ?? 'tenant_viewer',
    });
    renderInvited(ctx, deps, invitation, `/operator/tenants/${tenantId}/users`);
  });

  router.post('/users/:user_id/revoke', async (ctx) => {
    await deps.people.revoke(ctx, operatorSession(ctx).sessionId, userIdOf(ctx));
    deps.flash(ctx, 'info', text(ctx, 'users.revokedFlash'));
    const back = single(ctx.query.back);
    ctx.redirect(back !== undefined && /^\/operator\/[A-Za-z0-9/_-]*$/.test(back) ? back : '/operator/users');
  });
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

/** An invitation token of the right shape; any other is not found without asking the gateway. */
function tokenOf(ctx: ConsoleContext): string {
  const token = ctx.params.token ?? '';
  if (!INVITATION_TOKEN.test(token)) throw new NotFoundError(text(ctx, 'invitation.gone'));
  return token;
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

/** A refusal's detail with the fields it names ("totp: wrong code"). */
function refusalText(err: GatewayError): string {
  const fields = (err.problem.errors ?? []).map((e) => `${(e.path ?? '').replace(/^\//, '')}: ${e.message ?? ''}`);
  return fields.length > 0 ? fields.join('; ') : (err.problem.detail ?? err.message);
}
