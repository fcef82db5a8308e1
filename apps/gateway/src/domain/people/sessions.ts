import {
  DEVELOPMENT_SIGN_IN_METHODS,
  OPERATOR_SESSION_HOURS,
  SESSION_IDLE_MINUTES,
  TENANT_SESSION_HOURS,
  type ConsoleRole,
  type ConsoleSession,
  type PasswordSignIn,
  type SignInRequest,
} from '@payments/contracts';
import { findActiveIntegrationToken } from '../../db/credential-store';
import { findActiveOperator } from '../tenancy/operators';
import { recordAdminAction, type AuditedBy } from '../tenancy/admin-audit';
import {
  endSessions,
  findSession,
  insertSession,
  newestActiveTokenId,
  touchSession,
  type SessionRecord,
} from '../../db/people/sessions-store';
import { claimTotpStep, findActiveUserByEmail, markSignedIn } from '../../db/people/users-store';
import { SessionEndedError, SignInLimitedError, SignInMethodDisabledError, SignInRefusedError } from './errors';
import { verifyPassword } from './passwords';
import type { PeopleDeps, RequestOrigin } from './people';
import { newSessionId, credentialKey, openTotpSecret, secretHash } from './secrets';
import { checkSignInLimits, clearAccountFailures, recordSignInFailure, type SignInKeys } from './sign-in-limits';
import { totpStep } from './totp';

/**
 * Console sessions: server-side, named by an opaque id the console keeps in its cookie (stored here as
 * its SHA-256), with an absolute lifetime (tenant 12 h, operator 8 h) and an idle limit (30 min). A
 * session stands only while its user, integration token, operator and tenant do: revoking any of them
 * ends it at the next look, and the revoking action ends it in the table too.
 */

const HOUR_MS = 3_600_000;
const IDLE_MS = SESSION_IDLE_MINUTES * 60_000;

/** Who signed in, once the credentials are checked. */
interface SignedIn {
  role: ConsoleRole;
  tenantId: string | null;
  tenantName: string | null;
  user: { user_id: string; email: string; name: string } | null;
  tokenId: string | null;
  operatorId: string | null;
  /** The audit's name of who signed in. */
  auditName: string;
}

/** A session as the domain sees it: its view, plus what the tenant JWT descends from. */
export interface OpenSession {
  view: ConsoleSession;
  idHash: Buffer;
  /** The integration token the tenant JWT names (the session's own in development, else the tenant's newest). */
  jwtTokenId: string | undefined;
  /** Who acts through this session, as the audit names them. */
  by: AuditedBy;
}

/** Signs in; throws SignInRefusedError, SignInLimitedError or SignInMethodDisabledError. Every outcome is audited. */
export async function signIn(deps: PeopleDeps, request: SignInRequest, origin: RequestOrigin): Promise<ConsoleSession> {
  const now = deps.clock();
  const attempt = attemptOf(request, origin);
  const refused = (reason: string) => auditRefusal(deps, attempt, origin, reason);
  if (deps.mode === 'production' && DEVELOPMENT_SIGN_IN_METHODS.includes(request.method)) {
    await refused('method_disabled');
    throw new SignInMethodDisabledError(
      `signing in with ${request.method === 'integration_token' ? 'an integration token' : 'an operator credential'} is for development only: sign in with your e-mail, password and TOTP code`,
    );
  }
  try {
    await checkSignInLimits(deps.db, attempt.keys, now);
  } catch (err) {
    if (err instanceof SignInLimitedError) await refused('too_many_failures');
    throw err;
  }
  let who: SignedIn;
  try {
    who = await checkCredentials(deps, request, now);
  } catch (err) {
    if (!(err instanceof SignInRefusedError)) throw err;
    await recordSignInFailure(deps.db, attempt.keys, now);
    await refused(err.reason);
    throw err;
  }
  await clearAccountFailures(deps.db, attempt.keys);
  return openSession(deps, who, origin, now);
}

interface Attempt {
  keys: SignInKeys;
  /** What the audit names of an attempt whose credentials are not checked yet. */
  auditName: string;
  email: string | undefined;
}

function attemptOf(request: SignInRequest, origin: RequestOrigin): Attempt {
  const address = `address:${origin.address}`;
  switch (request.method) {
    case 'password': {
      const email = request.email.toLowerCase();
      return { keys: { account: `email:${email}`, address }, auditName: email, email };
    }
    case 'integration_token':
      return {
        keys: { account: `token:${credentialKey(request.token)}`, address },
        auditName: '(integration token)',
        email: undefined,
      };
    case 'operator_credential':
      return {
        keys: { account: `credential:${credentialKey(request.credential)}`, address },
        auditName: '(operator credential)',
        email: undefined,
      };
  }
}

async function auditRefusal(deps: PeopleDeps, attempt: Attempt, origin: RequestOrigin, reason: string) {
  await recordAdminAction(
    deps.db,
    consoleBy(attempt.auditName, origin, attempt.email),
    'session.sign-in-refused',
    null,
    {
      reason,
    },
  );
}

function consoleBy(operator: string, origin: RequestOrigin, userEmail?: string, userId?: string): AuditedBy {
  return { operator, source: 'console', address: origin.address, requestId: origin.requestId, userEmail, userId };
}

async function checkCredentials(deps: PeopleDeps, request: SignInRequest, now: Date): Promise<SignedIn> {
  switch (request.method) {
    case 'password':
      return checkPassword(deps, request, now);
    case 'integration_token': {
      const active = await findActiveIntegrationToken(deps.db, request.token);
      if (!active) throw new SignInRefusedError('unknown_token');
      const tenant = await deps.db
        .selectFrom('tenants')
        .select('name')
        .where('id', '=', active.tenantId)
        .executeTakeFirstOrThrow();
      // The token holds every right of its tenant's API: its console session is a tenant admin's.
      return {
        role: 'tenant_admin',
        tenantId: active.tenantId,
        tenantName: tenant.name,
        user: null,
        tokenId: active.tokenId,
        operatorId: null,
        auditName: '(integration token)',
      };
    }
    case 'operator_credential': {
      const operator = await findActiveOperator(deps.db, request.credential);
      if (!operator) throw new SignInRefusedError('unknown_operator_credential');
      return {
        role: 'operator',
        tenantId: null,
        tenantName: null,
        user: null,
        tokenId: null,
        operatorId: operator.operator_id,
        auditName: operator.name,
      };
    }
  }
}

async function checkPassword(deps: PeopleDeps, request: PasswordSignIn, now: Date): Promise<SignedIn> {
  const user = await findActiveUserByEmail(deps.db, request.email);
  // The password is checked even for an unknown e-mail, so both take the same time.
  if (!(await verifyPassword(user?.password_hash, request.password)) || !user)
    throw new SignInRefusedError(user ? 'wrong_password' : 'unknown_email');
  const step = totpStep(openTotpSecret(deps.keyring, 'user', user.id, user.sealed_totp_secret), request.totp, now);
  if (step === undefined) throw new SignInRefusedError('wrong_totp');
  if (!(await claimTotpStep(deps.db, user.id, step))) throw new SignInRefusedError('totp_reused');
  if (user.tenant_id !== null && user.tenant_status !== 'active') throw new SignInRefusedError('tenant_disabled');
  return {
    role: user.role,
    tenantId: user.tenant_id,
    tenantName: user.tenant_name,
    user: { user_id: user.id, email: user.email, name: user.name },
    tokenId: null,
    operatorId: null,
    auditName: user.email,
  };
}

async function openSession(deps: PeopleDeps, who: SignedIn, origin: RequestOrigin, now: Date): Promise<ConsoleSession> {
  const sessionId = newSessionId();
  const lifetimeHours = who.role === 'operator' ? OPERATOR_SESSION_HOURS : TENANT_SESSION_HOURS;
  const expiresAt = new Date(now.getTime() + lifetimeHours * HOUR_MS);
  const idleExpiresAt = idleDeadline(now, expiresAt);
  await deps.db.transaction().execute(async (trx) => {
    await insertSession(trx, {
      idHash: secretHash(sessionId),
      role: who.role,
      tenantId: who.tenantId,
      userId: who.user?.user_id ?? null,
      tokenId: who.tokenId,
      operatorId: who.operatorId,
      startedAt: now,
      expiresAt,
      idleExpiresAt,
      address: origin.address,
    });
    if (who.user) await markSignedIn(trx, who.user.user_id, now);
    const by = consoleBy(who.auditName, origin, who.user?.email, who.user?.user_id);
    await recordAdminAction(trx, by, 'session.sign-in', who.tenantId, { role: who.role, method: methodOf(who) });
  });
  return {
    session_id: sessionId,
    role: who.role,
    tenant_id: who.tenantId,
    tenant_name: who.tenantName,
    user: who.user,
    started_at: now.toISOString(),
    expires_at: expiresAt.toISOString(),
    idle_expires_at: idleExpiresAt.toISOString(),
  };
}

function methodOf(who: SignedIn): string {
  if (who.user) return 'password';
  return who.tokenId ? 'integration_token' : 'operator_credential';
}

function idleDeadline(now: Date, expiresAt: Date): Date {
  return new Date(Math.min(now.getTime() + IDLE_MS, expiresAt.getTime()));
}

/**
 * The session of this id if it still stands, its idle deadline moved forward; else SessionEndedError
 * (and a session found past a limit or revoked is ended in the table too).
 */
export async function useSession(
  deps: Pick<PeopleDeps, 'db' | 'clock'>,
  sessionId: string,
  origin: RequestOrigin,
): Promise<OpenSession> {
  const now = deps.clock();
  const idHash = secretHash(sessionId);
  const record = await findSession(deps.db, idHash);
  if (!record) throw new SessionEndedError();
  const endedBy = endReason(record, now);
  if (endedBy !== undefined) {
    if (record.ended_at === null) await endSessions(deps.db, { idHash }, endedBy, now);
    throw new SessionEndedError();
  }
  const idleExpiresAt = idleDeadline(now, record.expires_at);
  if (!(await touchSession(deps.db, idHash, idleExpiresAt))) throw new SessionEndedError();
  const jwtTokenId =
    record.tenant_id === null ? undefined : (record.token_id ?? (await newestActiveTokenId(deps.db, record.tenant_id)));
  return { view: viewOf(sessionId, record, idleExpiresAt), idHash, jwtTokenId, by: sessionBy(record, origin) };
}

/** Why a stored session no longer stands, or undefined while it does. */
function endReason(r: SessionRecord, now: Date): string | undefined {
  if (r.ended_at !== null) return 'ended';
  if (now >= r.expires_at) return 'expired';
  if (now >= r.idle_expires_at) return 'idle';
  if (r.user_id !== null && (r.user_revoked_at !== null || r.user_email === null)) return 'user_revoked';
  if (r.token_id !== null && r.token_revoked_at !== null) return 'token_revoked';
  if (r.operator_id !== null && r.operator_revoked_at !== null) return 'operator_revoked';
  if (r.tenant_id !== null && r.tenant_status !== 'active') return 'tenant_disabled';
  return undefined;
}

function viewOf(sessionId: string, r: SessionRecord, idleExpiresAt: Date): ConsoleSession {
  return {
    session_id: sessionId,
    role: r.role,
    tenant_id: r.tenant_id,
    tenant_name: r.tenant_name,
    user:
      r.user_id !== null && r.user_email !== null && r.user_name !== null
        ? { user_id: r.user_id, email: r.user_email, name: r.user_name }
        : null,
    started_at: r.started_at.toISOString(),
    expires_at: r.expires_at.toISOString(),
    idle_expires_at: idleExpiresAt.toISOString(),
  };
}

/** The audit's record of who acts through a session: the user's e-mail, or the development credential. */
function sessionBy(r: SessionRecord, origin: RequestOrigin): AuditedBy {
  const name = r.user_email ?? r.operator_name ?? '(integration token)';
  return consoleBy(name, origin, r.user_email ?? undefined, r.user_id ?? undefined);
}

/** Signs out: the session ends at once, so a copy of its id opens nothing. Unknown or ended: SessionEndedError. */
export async function signOut(deps: PeopleDeps, sessionId: string, origin: RequestOrigin): Promise<void> {
  const now = deps.clock();
  const idHash = secretHash(sessionId);
  const record = await findSession(deps.db, idHash);
  if (!record || record.ended_at !== null) throw new SessionEndedError();
  await deps.db.transaction().execute(async (trx) => {
    if ((await endSessions(trx, { idHash }, 'signed_out', now)) === 0) throw new SessionEndedError();
    await recordAdminAction(trx, sessionBy(record, origin), 'session.sign-out', record.tenant_id, {
      role: record.role,
    });
  });
}
