import { randomUUID } from 'node:crypto';
import {
  INVITATION_HOURS,
  type AcceptedInvitation,
  type AcceptInvitationRequest,
  type ConsoleRole,
  type InvitationView,
  type NewInvitation,
  type TenantRole,
} from '@payments/contracts';
import { recordAdminAction } from '../tenancy/admin-audit';
import {
  activeEmailTaken,
  findOpenInvitation,
  findTenant,
  insertInvitation,
  insertUser,
  keepInvitationSecret,
  markInvitationAccepted,
} from '../../db/people/users-store';
import {
  InvitationNotFoundError,
  PeopleConflictError,
  PeopleForbiddenError,
  PeopleInputError,
  PeopleNotFoundError,
} from './errors';
import { hashPassword } from './passwords';
import type { PeopleDeps, Principal, RequestOrigin } from './people';
import { newInvitationToken, openTotpSecret, sealTotpSecret, secretHash } from './secrets';
import { newTotpSecret, totpStep, totpUri } from './totp';

/**
 * One-time invitations: an operator invites operators and tenant users, a tenant admin the users of
 * its own tenant. The token is answered once (the console shows the link, no e-mail is sent) and
 * stored as its SHA-256; the TOTP secret is made on the first read and kept, sealed, until accepted.
 */

const HOUR_MS = 3_600_000;

/** A tenant user's invitation: by an operator, or by a tenant_admin of that tenant. */
export async function inviteTenantUser(
  deps: PeopleDeps,
  principal: Principal,
  tenantId: string,
  invitation: { email: string; role: TenantRole },
): Promise<NewInvitation> {
  if (principal.kind === 'tenant' && (principal.role !== 'tenant_admin' || principal.tenantId !== tenantId))
    throw new PeopleForbiddenError("only an operator or an admin of this tenant invites this tenant's users");
  const tenant = await findTenant(deps.db, tenantId);
  if (!tenant || tenant.status !== 'active') throw new PeopleNotFoundError(`no active tenant ${tenantId}`);
  return invite(deps, principal, invitation.email, invitation.role, tenantId);
}

/** An operator's invitation: by an operator only. */
export async function inviteOperator(deps: PeopleDeps, principal: Principal, email: string): Promise<NewInvitation> {
  if (principal.kind !== 'operator') throw new PeopleForbiddenError('only an operator invites operators');
  return invite(deps, principal, email, 'operator', null);
}

async function invite(
  deps: PeopleDeps,
  principal: Principal,
  email: string,
  role: ConsoleRole,
  tenantId: string | null,
): Promise<NewInvitation> {
  const address = email.trim().toLowerCase();
  if (await activeEmailTaken(deps.db, address))
    throw new PeopleConflictError(`an active user already signs in as ${address}: revoke it first`);
  const token = newInvitationToken();
  const id = randomUUID();
  const expiresAt = new Date(deps.clock().getTime() + INVITATION_HOURS * HOUR_MS);
  await deps.db.transaction().execute(async (trx) => {
    await insertInvitation(trx, {
      id,
      token_hash: secretHash(token),
      email: address,
      role,
      tenant_id: tenantId,
      invited_by: principal.by.operator,
      expires_at: expiresAt,
    });
    await recordAdminAction(trx, principal.by, 'user.invite', tenantId, { invitation_id: id, email: address, role });
  });
  return {
    invitation_id: id,
    email: address,
    role,
    tenant_id: tenantId,
    invitation_token: token,
    expires_at: expiresAt.toISOString(),
  };
}

/** What an open invitation is for, with its TOTP secret (made on the first read); InvitationNotFoundError otherwise. */
export async function readInvitation(deps: PeopleDeps, token: string): Promise<InvitationView> {
  const invitation = await findOpenInvitation(deps.db, secretHash(token), deps.clock());
  if (!invitation) throw new InvitationNotFoundError();
  const sealed =
    invitation.sealed_totp_secret ??
    (await keepInvitationSecret(
      deps.db,
      invitation.id,
      sealTotpSecret(deps.keyring, 'invitation', invitation.id, newTotpSecret()),
    ));
  const secret = openTotpSecret(deps.keyring, 'invitation', invitation.id, sealed);
  return {
    email: invitation.email,
    role: invitation.role,
    tenant_name: invitation.tenant_name,
    totp_secret: secret,
    otpauth_uri: totpUri(secret, invitation.email),
    expires_at: invitation.expires_at.toISOString(),
  };
}

/**
 * Accepts an invitation: the user is made with its password (argon2id) and the invitation's TOTP
 * secret, proved by a current code, which counts as used. The invitation is used once.
 */
export async function acceptInvitation(
  deps: PeopleDeps,
  token: string,
  request: AcceptInvitationRequest,
  origin: RequestOrigin,
): Promise<AcceptedInvitation> {
  // Hashing takes tens of milliseconds: done before the transaction holds the invitation's row.
  const passwordHash = await hashPassword(request.password);
  const now = deps.clock();
  return deps.db.transaction().execute(async (trx) => {
    const invitation = await findOpenInvitation(trx, secretHash(token), now, true);
    if (!invitation) throw new InvitationNotFoundError();
    if (invitation.sealed_totp_secret === null)
      throw new PeopleInputError('/totp', 'open the invitation first: it gives the TOTP secret for the authenticator');
    const secret = openTotpSecret(deps.keyring, 'invitation', invitation.id, invitation.sealed_totp_secret);
    const step = totpStep(secret, request.totp, now);
    if (step === undefined)
      throw new PeopleInputError('/totp', 'is not the current code of the authenticator set up with this invitation');
    if (await activeEmailTaken(trx, invitation.email))
      throw new PeopleConflictError(`an active user already signs in as ${invitation.email}`);
    const userId = randomUUID();
    await insertUser(trx, {
      id: userId,
      email: invitation.email,
      name: request.name.trim(),
      role: invitation.role,
      tenant_id: invitation.tenant_id,
      password_hash: passwordHash,
      sealed_totp_secret: sealTotpSecret(deps.keyring, 'user', userId, secret),
      // The code that proved the authenticator is used: a sign-in needs a later one.
      totp_last_step: String(step),
    });
    await markInvitationAccepted(trx, invitation.id, userId, now);
    await recordAdminAction(
      trx,
      {
        operator: invitation.email,
        source: 'console',
        address: origin.address,
        requestId: origin.requestId,
        userId,
        userEmail: invitation.email,
      },
      'user.accept',
      invitation.tenant_id,
      { user_id: userId, invitation_id: invitation.id, role: invitation.role },
    );
    return { user_id: userId, email: invitation.email, role: invitation.role, tenant_id: invitation.tenant_id };
  });
}
