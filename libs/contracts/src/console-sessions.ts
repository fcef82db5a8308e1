import { Type, type Static } from '@sinclair/typebox';
import { ADMIN_API_PREFIX } from './admin';
import { NOT_BLANK_TEXT_PATTERN, Uuid } from './common';

/**
 * Console sessions and the people who sign in to the console, on the gateway's admin API (admin port,
 * reached only through trusted hops such as the console). A session lives in the gateway's database and
 * is named by an opaque id the console keeps in its cookie: no credential ever sits in a cookie, and
 * signing out, revoking a user or a token, or disabling a tenant ends it on the server at once
 * (docs/console.md, docs/api.md).
 */

/* Paths ------------------------------------------------------------------------------------------- */

/** POST: sign in (no Authorization). */
export const CONSOLE_SESSIONS_PATH = `${ADMIN_API_PREFIX}/sessions`;
/** GET: the session of `Authorization: Session <session_id>`, with a short tenant JWT for tenant roles. */
export const CONSOLE_CURRENT_SESSION_PATH = `${CONSOLE_SESSIONS_PATH}/current`;
/** POST: ends the current session on the server (204). */
export const CONSOLE_SIGN_OUT_PATH = `${CONSOLE_CURRENT_SESSION_PATH}/sign-out`;
/** POST: an operator invitation (by an operator). */
export const OPERATOR_INVITATIONS_PATH = `${ADMIN_API_PREFIX}/operator-invitations`;
/** GET: the operator users. */
export const OPERATOR_USERS_PATH = `${ADMIN_API_PREFIX}/operators/users`;

/** POST: a tenant user's invitation (an operator, or a tenant_admin of that tenant). */
export const tenantInvitationsPath = (tenantId: string): string =>
  `${ADMIN_API_PREFIX}/tenants/${encodeURIComponent(tenantId)}/invitations`;
/** GET: a tenant's users (an operator, or a tenant_admin of that tenant). */
export const tenantUsersPath = (tenantId: string): string =>
  `${ADMIN_API_PREFIX}/tenants/${encodeURIComponent(tenantId)}/users`;
/** GET (no Authorization): what an invitation is for, and its TOTP secret. */
export const invitationPath = (invitationToken: string): string =>
  `${ADMIN_API_PREFIX}/invitations/${encodeURIComponent(invitationToken)}`;
/** POST (no Authorization): accepts an invitation, making the user. */
export const invitationAcceptPath = (invitationToken: string): string => `${invitationPath(invitationToken)}/accept`;
/** POST: revokes a user and ends its sessions at once. */
export const userRevokePath = (userId: string): string =>
  `${ADMIN_API_PREFIX}/users/${encodeURIComponent(userId)}/revoke`;

/** The router patterns of the paths above (the gateway mounts these). */
export const ConsoleRoutePatterns = {
  tenantInvitations: `${ADMIN_API_PREFIX}/tenants/:tenant_id/invitations`,
  tenantUsers: `${ADMIN_API_PREFIX}/tenants/:tenant_id/users`,
  invitation: `${ADMIN_API_PREFIX}/invitations/:invitation_token`,
  invitationAccept: `${ADMIN_API_PREFIX}/invitations/:invitation_token/accept`,
  userRevoke: `${ADMIN_API_PREFIX}/users/:user_id/revoke`,
} as const;

/** The console's page that opens an invitation: `/invitations/<invitation_token>`. */
export const consoleInvitationPagePath = (invitationToken: string): string =>
  `/invitations/${encodeURIComponent(invitationToken)}`;

/* Headers, prefixes, lifetimes and limits ---------------------------------------------------------- */

/** `Authorization: Session <session_id>`: how the console names the session it acts for. */
export const SESSION_AUTH_SCHEME = 'Session';
/** The end user's address, written by the console (the admin app trusts its hop: Koa proxy mode). */
export const CONSOLE_FORWARDED_FOR_HEADER = 'X-Forwarded-For';
export const CONSOLE_REQUEST_ID_HEADER = 'X-Request-Id';

/** A session id: `ses_` + 256 random bits in base64url (43 characters); stored only as its SHA-256. */
export const SESSION_ID_PREFIX = 'ses_';
export const SESSION_ID_PATTERN = '^ses_[A-Za-z0-9_-]{43}$';
/** An invitation token: `inv_` + 256 random bits in base64url (43 characters); shown once, stored hashed. */
export const INVITATION_TOKEN_PREFIX = 'inv_';
export const INVITATION_TOKEN_PATTERN = '^inv_[A-Za-z0-9_-]{43}$';

/** Absolute lifetimes from sign-in, whatever the use. */
export const TENANT_SESSION_HOURS = 12;
export const OPERATOR_SESSION_HOURS = 8;
/** A session unused this long ends; each GET of the current session moves the idle deadline. */
export const SESSION_IDLE_MINUTES = 30;
/** The tenant JWT answered with the current session lives at most this long. */
export const SESSION_TENANT_JWT_MAX_SECONDS = 300;
/** An invitation is good this long from its creation, and once. */
export const INVITATION_HOURS = 72;
/** A console password's least length. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

/**
 * Sign-in limits, counted over failures in a sliding window: over either, the gateway answers 429
 * `rate_limited` with Retry-After (seconds) before looking at the credentials.
 */
export const SIGN_IN_LIMIT_WINDOW_MINUTES = 15;
/** Failures per e-mail (or per integration token / operator credential in development). */
export const SIGN_IN_FAILURES_PER_ACCOUNT = 5;
/** Failures per client address (X-Forwarded-For as the console writes it). */
export const SIGN_IN_FAILURES_PER_ADDRESS = 30;

/** TOTP as RFC 6238 fixes it: SHA-1, 6 digits, 30-second steps, ±1 step accepted, each code once per user. */
export const TOTP_SETTINGS = { algorithm: 'SHA1', digits: 6, periodSeconds: 30, window: 1 } as const;
/** The issuer the authenticator app shows beside the e-mail. */
export const TOTP_ISSUER = 'Payments console';

/* Roles ------------------------------------------------------------------------------------------- */

export const ConsoleRoles = ['tenant_viewer', 'tenant_admin', 'operator'] as const;
export type ConsoleRole = (typeof ConsoleRoles)[number];
export const TenantRoles = ['tenant_viewer', 'tenant_admin'] as const;
export type TenantRole = (typeof TenantRoles)[number];

export const ConsoleRoleSchema = Type.Union(
  [Type.Literal('tenant_viewer'), Type.Literal('tenant_admin'), Type.Literal('operator')],
  { description: 'tenant_viewer and tenant_admin are bound to one tenant; operator to none.' },
);
export const TenantRoleSchema = Type.Union([Type.Literal('tenant_viewer'), Type.Literal('tenant_admin')]);

/** Where an audited action came from. */
export const AuditSources = ['console', 'admin_api', 'cli', 'code'] as const;
export type AuditSource = (typeof AuditSources)[number];

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const Email = () =>
  Type.String({ format: 'email', minLength: 3, maxLength: 254, description: 'Compared without regard to case.' });
const TotpCode = () => Type.String({ pattern: '^[0-9]{6}$', description: 'The 6 digits the authenticator shows.' });
const PersonName = () => Type.String({ minLength: 1, maxLength: 200, pattern: NOT_BLANK_TEXT_PATTERN });

/* Sign in ----------------------------------------------------------------------------------------- */

export const PasswordSignInSchema = Type.Object(
  {
    method: Type.Literal('password'),
    email: Email(),
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }),
    totp: TotpCode(),
  },
  { additionalProperties: false },
);

/** Development only: 403 sign_in_method_disabled in production. */
export const IntegrationTokenSignInSchema = Type.Object(
  { method: Type.Literal('integration_token'), token: Type.String({ minLength: 1, maxLength: 1000 }) },
  { additionalProperties: false },
);

/** Development only: 403 sign_in_method_disabled in production. */
export const OperatorCredentialSignInSchema = Type.Object(
  { method: Type.Literal('operator_credential'), credential: Type.String({ minLength: 1, maxLength: 1000 }) },
  { additionalProperties: false },
);

export const SignInMethods = ['password', 'integration_token', 'operator_credential'] as const;
export type SignInMethod = (typeof SignInMethods)[number];
/** The methods that sign in only in development. */
export const DEVELOPMENT_SIGN_IN_METHODS: readonly SignInMethod[] = ['integration_token', 'operator_credential'];

export const SignInRequestSchema = Type.Union(
  [PasswordSignInSchema, IntegrationTokenSignInSchema, OperatorCredentialSignInSchema],
  { $id: 'ConsoleSignInRequest' },
);
export type SignInRequest = Static<typeof SignInRequestSchema>;
export type PasswordSignIn = Static<typeof PasswordSignInSchema>;

/* Sessions ---------------------------------------------------------------------------------------- */

export const ConsoleUserRefSchema = Type.Object({ user_id: Uuid(), email: Type.String(), name: Type.String() });
export type ConsoleUserRef = Static<typeof ConsoleUserRefSchema>;

export const ConsoleSessionSchema = Type.Object(
  {
    session_id: Type.String({ pattern: SESSION_ID_PATTERN }),
    role: ConsoleRoleSchema,
    tenant_id: Type.Union([Uuid(), Type.Null()]),
    tenant_name: Type.Union([Type.String(), Type.Null()]),
    user: Type.Union([ConsoleUserRefSchema, Type.Null()], {
      description: 'Null for the development sign-ins (integration token, operator credential).',
    }),
    started_at: Timestamp('ISO 8601'),
    expires_at: Timestamp(`Absolute end: ${TENANT_SESSION_HOURS} h (tenant), ${OPERATOR_SESSION_HOURS} h (operator)`),
    idle_expires_at: Timestamp(`Ends if unused until then (${SESSION_IDLE_MINUTES} min idle)`),
  },
  { $id: 'ConsoleSession' },
);
export type ConsoleSession = Static<typeof ConsoleSessionSchema>;

export const SessionTenantJwtSchema = Type.Object({
  access_token: Type.String({ description: 'A JWT the public API accepts for the session’s tenant.' }),
  expires_at: Timestamp(`At most ${SESSION_TENANT_JWT_MAX_SECONDS} s ahead`),
});
export type SessionTenantJwt = Static<typeof SessionTenantJwtSchema>;

export const CurrentConsoleSessionSchema = Type.Intersect(
  [ConsoleSessionSchema, Type.Object({ tenant_jwt: Type.Optional(SessionTenantJwtSchema) })],
  { $id: 'CurrentConsoleSession' },
);
export type CurrentConsoleSession = ConsoleSession & { tenant_jwt?: SessionTenantJwt };

/* Invitations and users --------------------------------------------------------------------------- */

export const TenantInvitationRequestSchema = Type.Object(
  { email: Email(), role: TenantRoleSchema },
  { $id: 'TenantInvitationRequest', additionalProperties: false },
);
export type TenantInvitationRequest = Static<typeof TenantInvitationRequestSchema>;

export const OperatorInvitationRequestSchema = Type.Object(
  { email: Email() },
  { $id: 'OperatorInvitationRequest', additionalProperties: false },
);
export type OperatorInvitationRequest = Static<typeof OperatorInvitationRequestSchema>;

export const NewInvitationSchema = Type.Object(
  {
    invitation_id: Uuid(),
    email: Type.String(),
    role: ConsoleRoleSchema,
    tenant_id: Type.Union([Uuid(), Type.Null()]),
    invitation_token: Type.String({
      pattern: INVITATION_TOKEN_PATTERN,
      description: 'Shown once: never again. The console links to /invitations/<invitation_token>.',
    }),
    expires_at: Timestamp(`${INVITATION_HOURS} h after its creation`),
  },
  { $id: 'NewInvitation' },
);
export type NewInvitation = Static<typeof NewInvitationSchema>;

export const InvitationViewSchema = Type.Object(
  {
    email: Type.String(),
    role: ConsoleRoleSchema,
    tenant_name: Type.Union([Type.String(), Type.Null()]),
    totp_secret: Type.String({ pattern: '^[A-Z2-7]+=*$', description: 'Base32, for the authenticator app.' }),
    otpauth_uri: Type.String({ description: 'otpauth://totp/... (for a QR code)' }),
    expires_at: Timestamp('ISO 8601'),
  },
  { $id: 'InvitationView' },
);
export type InvitationView = Static<typeof InvitationViewSchema>;

export const AcceptInvitationRequestSchema = Type.Object(
  {
    name: PersonName(),
    password: Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH }),
    totp: TotpCode(),
  },
  { $id: 'AcceptInvitationRequest', additionalProperties: false },
);
export type AcceptInvitationRequest = Static<typeof AcceptInvitationRequestSchema>;

export const AcceptedInvitationSchema = Type.Object(
  { user_id: Uuid(), email: Type.String(), role: ConsoleRoleSchema, tenant_id: Type.Union([Uuid(), Type.Null()]) },
  { $id: 'AcceptedInvitation' },
);
export type AcceptedInvitation = Static<typeof AcceptedInvitationSchema>;

export const ConsoleUserSchema = Type.Object(
  {
    user_id: Uuid(),
    email: Type.String(),
    name: Type.String(),
    role: ConsoleRoleSchema,
    created_at: Timestamp('ISO 8601'),
    revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_sign_in_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'ConsoleUser' },
);
export type ConsoleUser = Static<typeof ConsoleUserSchema>;

export const ConsoleUserListSchema = Type.Object({ items: Type.Array(ConsoleUserSchema) }, { $id: 'ConsoleUserList' });
export type ConsoleUserList = Static<typeof ConsoleUserListSchema>;

export const RevokedUserSchema = Type.Object({ user_id: Uuid(), revoked: Type.Literal(true) }, { $id: 'RevokedUser' });
export type RevokedUser = Static<typeof RevokedUserSchema>;
