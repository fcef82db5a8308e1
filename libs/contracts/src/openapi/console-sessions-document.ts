import {
  AcceptedInvitationSchema,
  AcceptInvitationRequestSchema,
  ConsoleSessionSchema,
  CONSOLE_CURRENT_SESSION_PATH,
  CONSOLE_SESSIONS_PATH,
  CONSOLE_SIGN_OUT_PATH,
  ConsoleUserListSchema,
  CurrentConsoleSessionSchema,
  InvitationViewSchema,
  NewInvitationSchema,
  OPERATOR_INVITATIONS_PATH,
  OPERATOR_USERS_PATH,
  OperatorInvitationRequestSchema,
  RevokedUserSchema,
  SignInRequestSchema,
  TenantInvitationRequestSchema,
} from '../console-sessions';
import type { AdminOperation } from './admin-document';

/**
 * The console's sessions and people on the admin API (console-sessions.ts): sign-in takes no
 * credential, the current session a `Session` one, invitations and users a session or an operator
 * credential; an invitation is read and accepted by its token alone.
 */
const BAD_INPUT = 'a field is missing or invalid: errors names each';
const ENDED = 'the session is unknown, signed out, past its limits, or its user, token or tenant was revoked';

export const CONSOLE_SESSION_OPERATIONS: readonly AdminOperation[] = [
  {
    method: 'post',
    path: CONSOLE_SESSIONS_PATH,
    operationId: 'consoleSignIn',
    summary:
      'Sign in to the console: e-mail, password and TOTP code (in development also an integration token or an operator credential)',
    access: 'none',
    requestBody: SignInRequestSchema,
    success: {
      status: 201,
      description: 'Signed in. The console keeps session_id in its cookie; nothing else.',
      schema: ConsoleSessionSchema,
    },
    errors: {
      validation_failed: BAD_INPUT,
      sign_in_refused: 'unknown e-mail, wrong password or wrong (or used) TOTP code: one answer for all',
      sign_in_method_disabled: 'an integration token or operator credential, on a production gateway',
      rate_limited: 'too many failed sign-ins for this e-mail or from this address: Retry-After says when to try',
    },
  },
  {
    method: 'get',
    path: CONSOLE_CURRENT_SESSION_PATH,
    operationId: 'consoleCurrentSession',
    summary: 'The current session, its idle deadline moved; for tenant roles a JWT of the public API (5 min at most)',
    access: 'session',
    success: { status: 200, description: 'The session stands.', schema: CurrentConsoleSessionSchema },
    errors: { session_ended: ENDED },
  },
  {
    method: 'post',
    path: CONSOLE_SIGN_OUT_PATH,
    operationId: 'consoleSignOut',
    summary: 'Sign out: the session ends on the server at once',
    access: 'session',
    success: { status: 204, description: 'Signed out.' },
    errors: { session_ended: ENDED },
  },
  {
    method: 'post',
    path: '/admin/v1/tenants/{tenant_id}/invitations',
    operationId: 'consoleInviteTenantUser',
    summary: 'Invite a tenant user (an operator, or a tenant admin of this tenant); the token is answered once',
    access: 'session_or_operator',
    pathParameters: ['tenant_id'],
    requestBody: TenantInvitationRequestSchema,
    success: { status: 201, description: 'Invited: show the link now.', schema: NewInvitationSchema },
    errors: {
      validation_failed: BAD_INPUT,
      session_ended: ENDED,
      forbidden: 'a tenant viewer, or a tenant admin of another tenant',
      not_found: 'no such active tenant',
      conflict: 'an active user already has this e-mail',
    },
  },
  {
    method: 'post',
    path: OPERATOR_INVITATIONS_PATH,
    operationId: 'consoleInviteOperator',
    summary: 'Invite an operator (operators only); the token is answered once',
    access: 'session_or_operator',
    requestBody: OperatorInvitationRequestSchema,
    success: { status: 201, description: 'Invited: show the link now.', schema: NewInvitationSchema },
    errors: {
      validation_failed: BAD_INPUT,
      session_ended: ENDED,
      forbidden: 'a tenant user',
      conflict: 'an active user already has this e-mail',
    },
  },
  {
    method: 'get',
    path: '/admin/v1/invitations/{invitation_token}',
    operationId: 'consoleReadInvitation',
    summary: 'What an open invitation is for, and the TOTP secret to set up (made on the first read)',
    access: 'none',
    pathParameters: ['invitation_token'],
    success: { status: 200, description: 'The invitation is open.', schema: InvitationViewSchema },
    errors: { not_found: 'unknown, used or expired' },
  },
  {
    method: 'post',
    path: '/admin/v1/invitations/{invitation_token}/accept',
    operationId: 'consoleAcceptInvitation',
    summary: 'Accept an invitation with a name, a password and a current TOTP code; used once',
    access: 'none',
    pathParameters: ['invitation_token'],
    requestBody: AcceptInvitationRequestSchema,
    success: { status: 201, description: 'The user exists and may sign in.', schema: AcceptedInvitationSchema },
    errors: {
      validation_failed: 'a field is invalid (totp: not the current code; password: too short): errors names it',
      not_found: 'unknown, used or expired',
      conflict: 'an active user already has this e-mail',
    },
  },
  {
    method: 'get',
    path: '/admin/v1/tenants/{tenant_id}/users',
    operationId: 'consoleListTenantUsers',
    summary: "A tenant's console users (an operator, or a tenant admin of this tenant)",
    access: 'session_or_operator',
    pathParameters: ['tenant_id'],
    success: { status: 200, description: 'The users, oldest first.', schema: ConsoleUserListSchema },
    errors: {
      validation_failed: BAD_INPUT,
      session_ended: ENDED,
      forbidden: 'not an admin of this tenant',
      not_found: 'no such tenant',
    },
  },
  {
    method: 'get',
    path: OPERATOR_USERS_PATH,
    operationId: 'consoleListOperatorUsers',
    summary: 'The operators who sign in to the console (operators only)',
    access: 'session_or_operator',
    success: { status: 200, description: 'The operators, oldest first.', schema: ConsoleUserListSchema },
    errors: { session_ended: ENDED, forbidden: 'a tenant user' },
  },
  {
    method: 'post',
    path: '/admin/v1/users/{user_id}/revoke',
    operationId: 'consoleRevokeUser',
    summary: 'Revoke a console user (an operator; a tenant admin its own tenant’s): its sessions end at once',
    access: 'session_or_operator',
    pathParameters: ['user_id'],
    success: { status: 200, description: 'Revoked.', schema: RevokedUserSchema },
    errors: {
      validation_failed: BAD_INPUT,
      session_ended: ENDED,
      forbidden: 'a tenant user revoking an operator',
      not_found: 'no such active user (or not of your tenant)',
    },
  },
];
