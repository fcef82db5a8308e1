import type { ConsoleRole, ConsoleUserRef, CurrentConsoleSession, TenantRole } from '@payments/contracts';

/**
 * The signed-in user of one request, as the gateway answered GET /admin/v1/sessions/current for the
 * session id in the cookie. The console keeps nothing else: the session lives in the gateway's
 * database, so signing out, revoking a user or a token, or disabling a tenant ends it at once
 * (docs/console.md).
 */
export type Session = TenantSession | OperatorSession;

interface SessionBase {
  /** The opaque id the cookie holds; the admin API takes it as `Authorization: Session <id>`. */
  sessionId: string;
  /** The person signed in; null for the development sign-ins (integration token, operator credential). */
  user: ConsoleUserRef | null;
  /** ISO 8601: the absolute end of the session. */
  expiresAt: string;
}

export interface TenantSession extends SessionBase {
  role: 'tenant';
  /** tenant_viewer reads; tenant_admin also invites and revokes the tenant's users. */
  tenantRole: TenantRole;
  tenantId: string;
  tenantName: string | null;
  /** A public API JWT for this tenant, minted for this request (minutes long); never written to a page. */
  jwt: string;
}

export interface OperatorSession extends SessionBase {
  role: 'operator';
}

/** The gateway's answer as this request's session; undefined when it is not one the pages can serve. */
export function sessionOf(current: CurrentConsoleSession): Session | undefined {
  const base = { sessionId: current.session_id, user: current.user, expiresAt: current.expires_at };
  if (current.role === 'operator') return { ...base, role: 'operator' };
  if (!isTenantRole(current.role) || current.tenant_id === null || current.tenant_jwt === undefined) return undefined;
  return {
    ...base,
    role: 'tenant',
    tenantRole: current.role,
    tenantId: current.tenant_id,
    tenantName: current.tenant_name,
    jwt: current.tenant_jwt.access_token,
  };
}

function isTenantRole(role: ConsoleRole): role is TenantRole {
  return role === 'tenant_viewer' || role === 'tenant_admin';
}
