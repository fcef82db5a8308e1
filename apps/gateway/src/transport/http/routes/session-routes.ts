import type { Next } from 'koa';
import type Router from '@koa/router';
import type { Kysely } from 'kysely';
import type { RunMode } from '@payments/config';
import {
  AcceptInvitationRequestSchema,
  compileValidator,
  CONSOLE_CURRENT_SESSION_PATH,
  CONSOLE_SESSIONS_PATH,
  CONSOLE_SIGN_OUT_PATH,
  ConsoleRoutePatterns,
  INVITATION_TOKEN_PATTERN,
  IntegrationTokenSignInSchema,
  OPERATOR_INVITATIONS_PATH,
  OPERATOR_USERS_PATH,
  OperatorCredentialSignInSchema,
  OperatorInvitationRequestSchema,
  PasswordSignInSchema,
  ServiceError,
  SESSION_TENANT_JWT_MAX_SECONDS,
  SignInMethods,
  TenantInvitationRequestSchema,
  type CurrentConsoleSession,
  type SignInRequest,
  type Validator,
} from '@payments/contracts';
import type { Keyring } from '@payments/credential-seal';
import { issueAccessToken, type AccessTokenSettings } from '../../../domain/auth/access-tokens';
import type { SigningKeys } from '../../../domain/auth/signing-keys';
import type { GatewayDatabase } from '../../../db/schema';
import type { GatewayContext, GatewayState } from '../context';
import { uuidParam } from '../endpoint';
import { requestBody } from '../json-body';
import { validationError } from '../problem';
import {
  InvitationNotFoundError,
  PeopleConflictError,
  PeopleForbiddenError,
  PeopleInputError,
  PeopleNotFoundError,
  SessionEndedError,
  SignInLimitedError,
  SignInMethodDisabledError,
  SignInRefusedError,
} from '../../../domain/people/errors';
import { acceptInvitation, inviteOperator, inviteTenantUser, readInvitation } from '../../../domain/people/invitations';
import type { Clock, PeopleDeps, RequestOrigin } from '../../../domain/people/people';
import { callerOf, sessionCredential, type Caller } from '../../../domain/people/principal';
import { signIn, signOut, useSession } from '../../../domain/people/sessions';
import { listOperatorUsers, listTenantUsers, revokeUser } from '../../../domain/people/users';

type Middleware = (ctx: GatewayContext, next: Next) => Promise<unknown>;

export interface SessionRouteDeps {
  db: Kysely<GatewayDatabase>;
  /** Seals the TOTP secrets. */
  keyring: Keyring;
  /** Production refuses the development sign-ins (integration token, operator credential). */
  mode: RunMode;
  /** Sign the tenant JWT of a session, as POST /api/v1/authenticate does. */
  keys: SigningKeys;
  jwt: AccessTokenSettings;
  clock: Clock;
  bodyParser: Middleware;
}

/**
 * Console sessions and people on the admin API (docs/console.md): sign in, the current session with a
 * short tenant JWT, sign out, invitations and users. Every answer is no-store: they hold session ids,
 * invitation tokens and TOTP secrets.
 */
export function mountSessionRoutes(router: Router<GatewayState>, deps: SessionRouteDeps): void {
  const people: PeopleDeps = { db: deps.db, keyring: deps.keyring, mode: deps.mode, clock: deps.clock };
  const route = (method: 'GET' | 'POST', path: string, handle: (ctx: GatewayContext) => Promise<void>) =>
    router.register(path, [method], [deps.bodyParser, async (ctx: GatewayContext) => peopleCall(ctx, handle)]);
  const caller = (ctx: GatewayContext): Promise<Caller> => callerOf(people, ctx.get('authorization'), originOf(ctx));

  route('POST', CONSOLE_SESSIONS_PATH, async (ctx) => {
    const session = await signIn(people, signInBody(ctx), originOf(ctx));
    answer(ctx, 201, session);
  });

  route('GET', CONSOLE_CURRENT_SESSION_PATH, async (ctx) => {
    const session = await useSession(people, sessionIdOf(ctx), originOf(ctx));
    const body: CurrentConsoleSession = { ...session.view };
    if (session.view.tenant_id !== null && session.jwtTokenId !== undefined)
      body.tenant_jwt = await tenantJwt(deps, session.view.tenant_id, session.jwtTokenId);
    answer(ctx, 200, body);
  });

  route('POST', CONSOLE_SIGN_OUT_PATH, async (ctx) => {
    await signOut(people, sessionIdOf(ctx), originOf(ctx));
    ctx.status = 204;
    noStore(ctx);
  });

  route('POST', ConsoleRoutePatterns.tenantInvitations, async (ctx) => {
    const tenantId = uuidParam(ctx, 'tenant_id');
    const { principal } = await caller(ctx);
    const body = validBody(ctx, TENANT_INVITATION);
    answer(ctx, 201, await inviteTenantUser(people, principal, tenantId, body));
  });

  route('POST', OPERATOR_INVITATIONS_PATH, async (ctx) => {
    const { principal } = await caller(ctx);
    const body = validBody(ctx, OPERATOR_INVITATION);
    answer(ctx, 201, await inviteOperator(people, principal, body.email));
  });

  route('GET', ConsoleRoutePatterns.invitation, async (ctx) => {
    answer(ctx, 200, await readInvitation(people, invitationToken(ctx)));
  });

  route('POST', ConsoleRoutePatterns.invitationAccept, async (ctx) => {
    const token = invitationToken(ctx);
    const body = validBody(ctx, ACCEPT_INVITATION);
    answer(ctx, 201, await acceptInvitation(people, token, body, originOf(ctx)));
  });

  route('GET', ConsoleRoutePatterns.tenantUsers, async (ctx) => {
    const tenantId = uuidParam(ctx, 'tenant_id');
    const { principal } = await caller(ctx);
    answer(ctx, 200, { items: await listTenantUsers(people, principal, tenantId) });
  });

  route('GET', OPERATOR_USERS_PATH, async (ctx) => {
    const { principal } = await caller(ctx);
    answer(ctx, 200, { items: await listOperatorUsers(people, principal) });
  });

  route('POST', ConsoleRoutePatterns.userRevoke, async (ctx) => {
    const userId = uuidParam(ctx, 'user_id');
    const { principal } = await caller(ctx);
    answer(ctx, 200, await revokeUser(people, principal, userId));
  });
}

/** The end user's address (the console's X-Forwarded-For: the admin app trusts its hop) and the request id. */
function originOf(ctx: GatewayContext): RequestOrigin {
  return { address: ctx.ip || 'unknown', requestId: ctx.state.requestId };
}

function sessionIdOf(ctx: GatewayContext): string {
  const sessionId = sessionCredential(ctx.get('authorization'));
  if (sessionId === undefined) throw new ServiceError('unauthorized', 'send Authorization: Session <session id>');
  return sessionId;
}

function invitationToken(ctx: GatewayContext): string {
  const token = ctx.params.invitation_token ?? '';
  // Any other shape is no invitation of ours: told as an unknown one.
  if (!new RegExp(INVITATION_TOKEN_PATTERN).test(token)) throw new InvitationNotFoundError();
  return token;
}

/** A JWT the public API takes for the tenant, living at most SESSION_TENANT_JWT_MAX_SECONDS. */
async function tenantJwt(deps: SessionRouteDeps, tenantId: string, tokenId: string) {
  const ttlSeconds = Math.min(deps.jwt.ttlSeconds, SESSION_TENANT_JWT_MAX_SECONDS);
  const issuedAt = Math.floor(Date.now() / 1000);
  const { token } = await issueAccessToken(deps.keys, { ...deps.jwt, ttlSeconds }, tenantId, tokenId);
  return { access_token: token, expires_at: new Date((issuedAt + ttlSeconds) * 1000).toISOString() };
}

const SIGN_IN: Record<SignInRequest['method'], Validator<SignInRequest>> = {
  password: compileValidator(PasswordSignInSchema),
  integration_token: compileValidator(IntegrationTokenSignInSchema),
  operator_credential: compileValidator(OperatorCredentialSignInSchema),
};
const TENANT_INVITATION = compileValidator(TenantInvitationRequestSchema);
const OPERATOR_INVITATION = compileValidator(OperatorInvitationRequestSchema);
const ACCEPT_INVITATION = compileValidator(AcceptInvitationRequestSchema);

/** The sign-in body, checked against the schema of its method (so errors name that method's fields). */
function signInBody(ctx: GatewayContext): SignInRequest {
  const body = requestBody(ctx);
  const method = typeof body === 'object' && body !== null && 'method' in body ? body.method : undefined;
  const known = SignInMethods.find((m) => m === method);
  if (known === undefined)
    throw validationError([{ path: '/method', message: `must be one of ${SignInMethods.join(', ')}` }]);
  return validBody(ctx, SIGN_IN[known]);
}

function validBody<T>(ctx: GatewayContext, validate: Validator<T>): T {
  const result = validate(requestBody(ctx));
  if (!result.ok) throw validationError(result.errors);
  return result.value;
}

function answer(ctx: GatewayContext, status: number, body: unknown): void {
  ctx.status = status;
  noStore(ctx);
  ctx.body = body;
}

function noStore(ctx: GatewayContext): void {
  ctx.set('cache-control', 'no-store');
}

/** The people rules' refusals, said the admin API's way. */
async function peopleCall(ctx: GatewayContext, handle: (ctx: GatewayContext) => Promise<void>): Promise<void> {
  try {
    await handle(ctx);
  } catch (err) {
    throw serviceErrorOf(ctx, err);
  }
}

function serviceErrorOf(ctx: GatewayContext, err: unknown): unknown {
  if (err instanceof SignInRefusedError) return new ServiceError('sign_in_refused', err.message);
  if (err instanceof SignInLimitedError) {
    ctx.set('retry-after', String(err.retryAfterSeconds));
    return new ServiceError('rate_limited', err.message);
  }
  if (err instanceof SignInMethodDisabledError) return new ServiceError('sign_in_method_disabled', err.message);
  if (err instanceof SessionEndedError) return new ServiceError('session_ended', err.message);
  if (err instanceof InvitationNotFoundError) return new ServiceError('not_found', err.message);
  if (err instanceof PeopleInputError) return validationError([{ path: err.field, message: err.message }]);
  if (err instanceof PeopleForbiddenError) return new ServiceError('forbidden', err.message);
  if (err instanceof PeopleNotFoundError) return new ServiceError('not_found', err.message);
  if (err instanceof PeopleConflictError) return new ServiceError('conflict', err.message);
  return err;
}
