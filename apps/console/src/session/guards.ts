import type { Context, Next } from 'koa';
import type { ConsoleState } from '../http/context';
import { ForbiddenError } from '../http/errors';
import type { OperatorSession, TenantSession } from './session';

type Role = 'tenant' | 'operator';

/**
 * Pages of one role: without a session the browser is sent to the login page; a session of the other
 * role gets 403 (a tenant's JWT never reaches the admin API's operator routes, an operator's session
 * never the public API).
 */
export function requireRole(role: Role) {
  return async (ctx: Context & { state: ConsoleState }, next: Next) => {
    const session = ctx.state.session;
    if (!session) {
      if (ctx.method === 'GET') return ctx.redirect(`/login?next=${encodeURIComponent(ctx.originalUrl)}`);
      throw new ForbiddenError('your session has ended: log in again');
    }
    if (session.role !== role)
      throw new ForbiddenError(
        role === 'operator'
          ? 'these are operator pages: log out and log in as an operator'
          : 'these are tenant pages: log out and log in as a tenant user',
      );
    await next();
  };
}

/** Tenant pages only a tenant_admin may use (the tenant's users). */
export function requireTenantAdmin() {
  return async (ctx: Context & { state: ConsoleState }, next: Next) => {
    if (tenantSession(ctx).tenantRole !== 'tenant_admin')
      throw new ForbiddenError("only a tenant admin manages the tenant's users");
    await next();
  };
}

/**
 * A tenant viewer reads: any other method than GET (a retry, a replay, a booklet request) is a
 * tenant admin's. The gateway's JWT carries the tenant's whole API, so the console is where the
 * viewer's role holds.
 */
export function viewersRead() {
  return async (ctx: Context & { state: ConsoleState }, next: Next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && tenantSession(ctx).tenantRole !== 'tenant_admin')
      throw new ForbiddenError('a tenant viewer reads only: ask a tenant admin to do this');
    await next();
  };
}

/** The tenant session of a page behind requireRole('tenant'). */
export function tenantSession(ctx: { state: ConsoleState }): TenantSession {
  const session = ctx.state.session;
  if (session?.role !== 'tenant') throw new ForbiddenError('this page needs a tenant session');
  return session;
}

/** The operator session of a page behind requireRole('operator'). */
export function operatorSession(ctx: { state: ConsoleState }): OperatorSession {
  const session = ctx.state.session;
  if (session?.role !== 'operator') throw new ForbiddenError('this page needs an operator session');
  return session;
}
