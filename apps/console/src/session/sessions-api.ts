import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import {
  CONSOLE_CURRENT_SESSION_PATH,
  CONSOLE_FORWARDED_FOR_HEADER,
  CONSOLE_REQUEST_ID_HEADER,
  CONSOLE_SESSIONS_PATH,
  CONSOLE_SIGN_OUT_PATH,
  SESSION_AUTH_SCHEME,
  type ConsoleSession,
  type CurrentConsoleSession,
  type SignInRequest,
} from '@payments/contracts';
import { asProblem, gatewayFetch, GatewayError, type GatewayFetchOptions, type Problem } from '../gateway/problem';

/**
 * The console's calls to the gateway's admin API on behalf of a browser: every call says who the end
 * user is (X-Forwarded-For, the address Koa sees) and which request it belongs to (X-Request-Id), so
 * the gateway limits and audits sign-ins per person and per address rather than per console. The admin
 * app trusts these headers because only trusted hops such as the console reach the admin port.
 */
export interface AdminCallOptions extends Pick<GatewayFetchOptions, 'gatewayTimeoutMs'> {
  /** The admin port's origin, e.g. http://127.0.0.1:3600. */
  baseUrl: string;
}

/** Who a call is for: the browser's address and this request's id. */
export interface CallerHeaders {
  [CONSOLE_FORWARDED_FOR_HEADER]: string;
  [CONSOLE_REQUEST_ID_HEADER]: string;
}

/** The caller headers of a console request (its X-Request-Id is made once and reused for every call). */
export function callerHeaders(ctx: Context): CallerHeaders {
  const state = ctx.state as { requestId?: string };
  state.requestId ??= validRequestId(ctx.get('x-request-id')) ?? randomUUID();
  return { [CONSOLE_FORWARDED_FOR_HEADER]: ctx.ip, [CONSOLE_REQUEST_ID_HEADER]: state.requestId };
}

/** `Authorization: Session <id>`. */
export function sessionAuthorization(sessionId: string): { authorization: string } {
  return { authorization: `${SESSION_AUTH_SCHEME} ${sessionId}` };
}

/** The admin API refused a call; a 429 says in how many seconds to try again (Retry-After). */
export class AdminRefusal extends GatewayError {
  override readonly name: string = 'AdminRefusal';
  constructor(
    operation: string,
    status: number,
    problem: Problem,
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(operation, status, problem);
  }
}

/** JSON calls to the admin API that answer a body or a GatewayError with the gateway's problem. */
export class AdminCalls {
  private readonly fetch: (request: Request) => Promise<Response>;
  private readonly baseUrl: string;

  constructor(options: AdminCallOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetch = gatewayFetch({ gatewayTimeoutMs: options.gatewayTimeoutMs, api: 'the admin API' });
  }

  /** The parsed body of a 2xx answer (undefined for 204), else a GatewayError. */
  async call<T>(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<T | undefined> {
    const request = new Request(`${this.baseUrl}${path}`, {
      method,
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const res = await this.fetch(request);
    const text = await res.text();
    const parsed = parseJson(text);
    if (!res.ok)
      throw new AdminRefusal(
        `${method} ${path}`,
        res.status,
        asProblem(parsed, res, 'the admin API'),
        retryAfter(res.headers.get('retry-after')),
      );
    return res.status === 204 ? undefined : (parsed as T);
  }

  /** As call(), for an answer that must have a body. */
  async expect<T>(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: unknown): Promise<T> {
    const data = await this.call<T>(method, path, headers, body);
    if (data === undefined || data === null)
      throw new GatewayError(`${method} ${path}`, 502, {
        title: 'Bad Gateway',
        status: 502,
        detail: 'the admin API answered without a body',
      });
    return data;
  }
}

/** Sign in, the current session and sign out (docs/console.md). */
export class SessionsApi {
  constructor(private readonly calls: AdminCalls) {}

  /** 201: the new session. A refusal (401 sign_in_refused, 429, 403 in production) is a GatewayError. */
  signIn(ctx: Context, request: SignInRequest): Promise<ConsoleSession> {
    return this.calls.expect<ConsoleSession>('POST', CONSOLE_SESSIONS_PATH, { ...callerHeaders(ctx) }, request);
  }

  /** The session with a fresh tenant JWT; a GatewayError 401 when it has ended. */
  current(ctx: Context, sessionId: string): Promise<CurrentConsoleSession> {
    return this.calls.expect<CurrentConsoleSession>('GET', CONSOLE_CURRENT_SESSION_PATH, {
      ...callerHeaders(ctx),
      ...sessionAuthorization(sessionId),
    });
  }

  /** Ends it on the server (204). */
  async signOut(ctx: Context, sessionId: string): Promise<void> {
    await this.calls.call('POST', CONSOLE_SIGN_OUT_PATH, { ...callerHeaders(ctx), ...sessionAuthorization(sessionId) });
  }
}

function retryAfter(header: string | null): number | undefined {
  const seconds = header === null ? NaN : Number(header);
  return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : undefined;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A browser-supplied request id passed on only when it is short and plain (it lands in the audit). */
function validRequestId(value: string): string | undefined {
  return /^[A-Za-z0-9._:-]{8,128}$/.test(value) ? value : undefined;
}
