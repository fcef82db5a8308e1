import type { Context } from 'koa';
import {
  invitationAcceptPath,
  invitationPath,
  OPERATOR_INVITATIONS_PATH,
  OPERATOR_USERS_PATH,
  tenantInvitationsPath,
  tenantUsersPath,
  userRevokePath,
  type AcceptedInvitation,
  type AcceptInvitationRequest,
  type ConsoleUserList,
  type InvitationView,
  type NewInvitation,
  type RevokedUser,
  type TenantRole,
} from '@payments/contracts';
import { callerHeaders, sessionAuthorization, type AdminCalls } from '../session/sessions-api';

/**
 * Invitations and users on the gateway's admin API (docs/console.md). Reading and accepting an
 * invitation needs no session (the token is the proof); everything else acts for the signed-in
 * session (an operator, or a tenant_admin of that tenant), which the admin API checks on every call.
 */
export class PeopleApi {
  constructor(private readonly calls: AdminCalls) {}

  invitation(ctx: Context, token: string): Promise<InvitationView> {
    return this.calls.expect('GET', invitationPath(token), { ...callerHeaders(ctx) });
  }

  accept(ctx: Context, token: string, body: AcceptInvitationRequest): Promise<AcceptedInvitation> {
    return this.calls.expect('POST', invitationAcceptPath(token), { ...callerHeaders(ctx) }, body);
  }

  tenantUsers(ctx: Context, sessionId: string, tenantId: string): Promise<ConsoleUserList> {
    return this.calls.expect('GET', tenantUsersPath(tenantId), this.as(ctx, sessionId));
  }

  operatorUsers(ctx: Context, sessionId: string): Promise<ConsoleUserList> {
    return this.calls.expect('GET', OPERATOR_USERS_PATH, this.as(ctx, sessionId));
  }

  inviteToTenant(
    ctx: Context,
    sessionId: string,
    tenantId: string,
    body: { email: string; role: TenantRole },
  ): Promise<NewInvitation> {
    return this.calls.expect('POST', tenantInvitationsPath(tenantId), this.as(ctx, sessionId), body);
  }

  inviteOperator(ctx: Context, sessionId: string, email: string): Promise<NewInvitation> {
    return this.calls.expect('POST', OPERATOR_INVITATIONS_PATH, this.as(ctx, sessionId), { email });
  }

  revoke(ctx: Context, sessionId: string, userId: string): Promise<RevokedUser> {
    return this.calls.expect('POST', userRevokePath(userId), this.as(ctx, sessionId));
  }

  private as(ctx: Context, sessionId: string): Record<string, string> {
    return { ...callerHeaders(ctx), ...sessionAuthorization(sessionId) };
  }
}
