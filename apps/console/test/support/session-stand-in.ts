import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CONSOLE_CURRENT_SESSION_PATH,
  CONSOLE_SESSIONS_PATH,
  CONSOLE_SIGN_OUT_PATH,
  type ConsoleRole,
  type CurrentConsoleSession,
} from '@payments/contracts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** What a stand-in gateway learned from the console's calls. */
export interface SeenCall {
  path: string;
  forwardedFor: string | undefined;
  requestId: string | undefined;
  authorization: string | undefined;
}

/** A JWT-shaped token (the gateway alone verifies; the console only passes it on). */
export function fakeJwt(sub: string, ttlSeconds = 300): string {
  const iat = Math.floor(Date.now() / 1000);
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'EdDSA' })}.${part({ sub, iat, exp: iat + ttlSeconds })}.${randomBytes(16).toString('base64url')}`;
}

/**
 * The gateway's console sessions as a stand-in answers them (the real ones are the e2e tests'):
 * `itk_good` signs a tenant admin in, `opk_good_operator` an operator, and
 * `ana@example.com` / `correct horse battery` / `123456` a tenant viewer; anything else is 401
 * sign_in_refused. Signed-out sessions answer 401 session_ended, as the gateway does.
 */
export class SessionStandIn {
  readonly sessions = new Map<string, CurrentConsoleSession>();
  readonly ended = new Set<string>();
  readonly calls: SeenCall[] = [];
  /** The answer every GET of the current session gets instead, when set (a 429, a 503...). */
  currentOverride: Handler | undefined;
  /** The tenant JWT the last lookup answered. */
  lastJwt = '';

  constructor(private readonly tenantId: string) {}

  routes(): Record<string, Handler> {
    return {
      [`POST ${CONSOLE_SESSIONS_PATH}`]: (req, res) => void this.signIn(req, res),
      [`GET ${CONSOLE_CURRENT_SESSION_PATH}`]: (req, res) => this.current(req, res),
      [`POST ${CONSOLE_SIGN_OUT_PATH}`]: (req, res) => this.signOut(req, res),
    };
  }

  /** A session made without signing in (for tests whose gateway is down). */
  make(role: ConsoleRole): string {
    const id = `ses_${randomBytes(32).toString('base64url')}`;
    const now = Date.now();
    this.sessions.set(id, {
      session_id: id,
      role,
      tenant_id: role === 'operator' ? null : this.tenantId,
      tenant_name: role === 'operator' ? null : 'Padaria Pão Quente',
      user: role === 'tenant_viewer' ? { user_id: this.tenantId, email: 'ana@example.com', name: 'Ana' } : null,
      started_at: new Date(now).toISOString(),
      expires_at: new Date(now + 8 * 3_600_000).toISOString(),
      idle_expires_at: new Date(now + 1_800_000).toISOString(),
    });
    return id;
  }

  private see(req: IncomingMessage): void {
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(',') : value;
    };
    this.calls.push({
      path: req.url ?? '',
      forwardedFor: header('x-forwarded-for'),
      requestId: header('x-request-id'),
      authorization: header('authorization'),
    });
  }

  private async signIn(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.see(req);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, string>;
    const role: ConsoleRole | undefined =
      body.method === 'integration_token' && body.token === 'itk_good'
        ? 'tenant_admin'
        : body.method === 'operator_credential' && body.credential === 'opk_good_operator'
          ? 'operator'
          : body.method === 'password' &&
              body.email === 'ana@example.com' &&
              body.password === 'correct horse battery' &&
              body.totp === '123456'
            ? 'tenant_viewer'
            : undefined;
    if (!role) return problem(res, 401, 'sign_in_refused', 'the e-mail, password or code do not match <b>x</b>');
    const id = this.make(role);
    json(res, 201, this.sessions.get(id));
  }

  private current(req: IncomingMessage, res: ServerResponse): void {
    this.see(req);
    if (this.currentOverride) return this.currentOverride(req, res);
    const session = this.sessionOf(req);
    if (!session) return problem(res, 401, 'session_ended', 'the session has ended');
    this.lastJwt = fakeJwt(this.tenantId);
    const answer: CurrentConsoleSession =
      session.role === 'operator'
        ? session
        : { ...session, tenant_jwt: { access_token: this.lastJwt, expires_at: new Date().toISOString() } };
    json(res, 200, answer);
  }

  private signOut(req: IncomingMessage, res: ServerResponse): void {
    this.see(req);
    const session = this.sessionOf(req);
    if (!session) return problem(res, 401, 'session_ended', 'the session has ended');
    this.ended.add(session.session_id);
    res.writeHead(204).end();
  }

  private sessionOf(req: IncomingMessage): CurrentConsoleSession | undefined {
    const id = /^Session (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (id === undefined || this.ended.has(id)) return undefined;
    return this.sessions.get(id);
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function problem(res: ServerResponse, status: number, code: string, detail: string): void {
  res.writeHead(status, { 'content-type': 'application/problem+json' });
  res.end(JSON.stringify({ type: 'about:blank', title: 'Unauthorized', status, detail, code }));
}
