import type { ConsoleUser, RevokedUser } from '@payments/contracts';
import { recordAdminAction } from '../tenancy/admin-audit';
import { endSessions } from '../../db/people/sessions-store';
import { findTenant, findUser, listUserRows, revokeUserRow, type UserRow } from '../../db/people/users-store';
import { PeopleForbiddenError, PeopleNotFoundError } from './errors';
import type { PeopleDeps, Principal } from './people';

/** Console users: listed per tenant (or the operators), and revoked, which ends their sessions at once. */

/** A tenant's users: an operator, or a tenant_admin of that tenant. */
export async function listTenantUsers(
  deps: PeopleDeps,
  principal: Principal,
  tenantId: string,
): Promise<ConsoleUser[]> {
  mayManageTenant(principal, tenantId);
  if (!(await findTenant(deps.db, tenantId))) throw new PeopleNotFoundError(`no tenant ${tenantId}`);
  return (await listUserRows(deps.db, tenantId)).map(userView);
}

/** The operator users: an operator only. */
export async function listOperatorUsers(deps: PeopleDeps, principal: Principal): Promise<ConsoleUser[]> {
  if (principal.kind !== 'operator') throw new PeopleForbiddenError('only an operator lists the operators');
  return (await listUserRows(deps.db, null)).map(userView);
}

/** Revokes a user (an operator: any; a tenant_admin: its tenant's) and ends every session of it. */
export async function revokeUser(deps: PeopleDeps, principal: Principal, userId: string): Promise<RevokedUser> {
  const user = await findUser(deps.db, userId);
  // A tenant admin is told nothing of users outside its tenant.
  if (!user || (principal.kind === 'tenant' && user.tenant_id !== principal.tenantId))
    throw new PeopleNotFoundError(`no user ${userId}`);
  if (user.tenant_id === null && principal.kind !== 'operator')
    throw new PeopleForbiddenError('only an operator revokes operators');
  if (user.tenant_id !== null) mayManageTenant(principal, user.tenant_id);
  const now = deps.clock();
  await deps.db.transaction().execute(async (trx) => {
    if (!(await revokeUserRow(trx, userId, now))) throw new PeopleNotFoundError(`no active user ${userId}`);
    const ended = await endSessions(trx, { userId }, 'user_revoked', now);
    await recordAdminAction(trx, principal.by, 'user.revoke', user.tenant_id, {
      user_id: userId,
      email: user.email,
      sessions_ended: ended,
    });
  });
  return { user_id: userId, revoked: true };
}

function mayManageTenant(principal: Principal, tenantId: string): void {
  if (principal.kind === 'tenant' && (principal.role !== 'tenant_admin' || principal.tenantId !== tenantId))
    throw new PeopleForbiddenError("only an operator or an admin of this tenant manages this tenant's users");
}

function userView(r: UserRow): ConsoleUser {
  return {
    user_id: r.id,
    email: r.email,
    name: r.name,
    role: r.role,
    created_at: r.created_at.toISOString(),
    revoked_at: r.revoked_at?.toISOString() ?? null,
    last_sign_in_at: r.last_sign_in_at?.toISOString() ?? null,
  };
}
