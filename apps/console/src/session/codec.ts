import { open, seal } from '@payments/credential-seal';

/**
 * What a session cookie holds, sealed (AES-256-GCM under CONSOLE_SESSION_KEY, see SessionCodec): the
 * console keeps no session store, so any instance sharing the key serves any request.
 */
export type Session = TenantSession | OperatorSession;

/** A tenant signed in with an integration token: only the JWT it was exchanged for is kept. */
export interface TenantSession {
  role: 'tenant';
  /** The gateway's access token; it never leaves the server except sealed in this cookie. */
  jwt: string;
  /** The JWT's sub, for display and for the not-found checks of the tests. */
  tenantId: string;
  /** Epoch ms: the JWT's iat and exp. The session ends with the last refreshed JWT's exp. */
  issuedAt: number;
  expiresAt: number;
}

/** An operator signed in with an `opk_` credential, checked by the admin API on every call. */
export interface OperatorSession {
  role: 'operator';
  credential: string;
  /** Epoch ms: when the operator signed in (the absolute limit counts from here). */
  startedAt: number;
  /** Epoch ms: the idle deadline, moved on each request up to the absolute limit. */
  expiresAt: number;
}

/** Idle and absolute lifetimes of an operator session. */
export const OPERATOR_IDLE_MS = 30 * 60_000;
export const OPERATOR_ABSOLUTE_MS = 8 * 60 * 60_000;

/** Associated data of the seal: a flash cookie's sealed text cannot be replayed as a session, nor the reverse. */
const SESSION_PURPOSE = 'console-session/v1';

/** Seals sessions into cookie values and opens them, refusing tampered, foreign or expired ones. */
export class SessionCodec {
  constructor(
    private readonly key: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  seal(session: Session): string {
    return seal(this.key, JSON.stringify(session), SESSION_PURPOSE);
  }

  /** The session, or undefined when the value is missing, altered, sealed with another key or expired. */
  open(value: string | undefined): Session | undefined {
    if (!value) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(open(this.key, value, SESSION_PURPOSE));
    } catch {
      return undefined;
    }
    const session = asSession(parsed);
    if (!session || session.expiresAt <= this.now()) return undefined;
    if (session.role === 'operator' && session.startedAt + OPERATOR_ABSOLUTE_MS <= this.now()) return undefined;
    return session;
  }
}

/** An operator session seen now: its idle deadline moved, never past the absolute limit. */
export function touchOperator(session: OperatorSession, now: number): OperatorSession {
  return { ...session, expiresAt: Math.min(now + OPERATOR_IDLE_MS, session.startedAt + OPERATOR_ABSOLUTE_MS) };
}

function asSession(value: unknown): Session | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  const isText = (x: unknown): x is string => typeof x === 'string' && x !== '';
  if (v.role === 'tenant' && isText(v.jwt) && isText(v.tenantId) && isNumber(v.issuedAt) && isNumber(v.expiresAt))
    return { role: 'tenant', jwt: v.jwt, tenantId: v.tenantId, issuedAt: v.issuedAt, expiresAt: v.expiresAt };
  if (v.role === 'operator' && isText(v.credential) && isNumber(v.startedAt) && isNumber(v.expiresAt))
    return { role: 'operator', credential: v.credential, startedAt: v.startedAt, expiresAt: v.expiresAt };
  return undefined;
}
