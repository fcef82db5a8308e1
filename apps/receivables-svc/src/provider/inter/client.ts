import { rootCertificates } from 'node:tls';
import { Agent, request, type Dispatcher } from 'undici';
import type { TSchema } from '@sinclair/typebox';
import {
  INTER_COBRANCA_SCOPE,
  INTER_PATHS,
  TokenResponse,
  interViolations,
  type ErrorBody,
} from '@payments/inter-cobranca';
import type { InterCredentials } from '@payments/contracts';
import { ProviderUnavailableError } from '../../domain/ports';

/** Inter answered with a status we do not treat as success (after one token refresh on 401). */
export class InterHttpError extends ProviderUnavailableError {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`inter ${what}: HTTP ${status}${describeError(body)}`);
  }

  /** Statuses that refuse the request itself (a retry gets the same answer): the charge is rejected. */
  get isRefusal(): boolean {
    return this.status === 400 || this.status === 404 || this.status === 422;
  }
}

/** The request did not get an answer (refused connection or TLS handshake, reset, timeout). */
export class InterNetworkError extends ProviderUnavailableError {}

/** Inter answered 2xx with a body that is not what its contract says. */
export class InterUnexpectedAnswerError extends ProviderUnavailableError {}

export interface InterCall {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  query?: Record<string, string>;
  json?: unknown;
  /** What the call is, for error messages ("create", "consult" ...). */
  what: string;
}

/** A token is used until this long before it expires. */
const TOKEN_MARGIN_MS = 60_000;

/**
 * One Inter account's connection: its client certificate (an undici Agent of its own, mutual TLS) and
 * its OAuth2 token, cached until a minute before it expires and shared by concurrent calls. Every call
 * carries the token; a 401 drops it and the call is made once more with a new one.
 */
export class InterAccountClient {
  private readonly agent: Agent;
  private token: { value: string; usableUntil: number } | null = null;
  private pendingToken: Promise<string> | null = null;
  /** Token requests made (observability and tests). */
  tokenRequests = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly credentials: InterCredentials,
    private readonly timeoutMs: number,
    trustedCaPem: string | undefined,
  ) {
    this.agent = new Agent({
      connect: {
        cert: credentials.cert_pem,
        key: credentials.key_pem,
        // An extra CA (the bank sandbox's) trusted besides the public ones Inter's certificate chains to.
        ...(trustedCaPem ? { ca: [...rootCertificates, trustedCaPem] } : {}),
        timeout: timeoutMs,
      },
    });
  }

  /** Calls the API with the account's token; a non-2xx answer is an InterHttpError, no answer an InterNetworkError. */
  async call(call: InterCall): Promise<{ status: number; body: unknown }> {
    const token = await this.bearer();
    const first = await this.send(call, token);
    if (first.status !== 401) return checked(first, call.what);
    this.token = null;
    return checked(await this.send(call, await this.bearer()), call.what);
  }

  /** Calls and checks the 2xx body against `schema` (an InterUnexpectedAnswerError when it does not conform). */
  async callFor<T>(call: InterCall, schema: TSchema): Promise<T> {
    const { body } = await this.call(call);
    const violations = interViolations(schema, body);
    if (violations.length > 0)
      throw new InterUnexpectedAnswerError(
        `inter ${call.what}: unexpected answer (${violations.map((v) => `${v.path || '/'} ${v.message}`).join('; ')})`,
      );
    return body as T;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private bearer(): Promise<string> {
    if (this.token && Date.now() < this.token.usableUntil) return Promise.resolve(this.token.value);
    this.pendingToken ??= this.fetchToken().finally(() => (this.pendingToken = null));
    return this.pendingToken;
  }

  private async fetchToken(): Promise<string> {
    this.tokenRequests += 1;
    const form = new URLSearchParams({
      client_id: this.credentials.client_id,
      client_secret: this.credentials.client_secret,
      grant_type: 'client_credentials',
      scope: INTER_COBRANCA_SCOPE,
    }).toString();
    const answer = checked(
      await this.exchange('POST', INTER_PATHS.token, {
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form,
      }),
      'token',
    );
    if (interViolations(TokenResponse, answer.body).length > 0)
      throw new InterUnexpectedAnswerError('inter token: unexpected answer');
    const token = answer.body as TokenResponse;
    this.token = { value: token.access_token, usableUntil: Date.now() + token.expires_in * 1_000 - TOKEN_MARGIN_MS };
    return token.access_token;
  }

  private send(call: InterCall, token: string) {
    const query = call.query ? `?${new URLSearchParams(call.query).toString()}` : '';
    return this.exchange(call.method, `${call.path}${query}`, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(call.json !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: call.json !== undefined ? JSON.stringify(call.json) : undefined,
    });
  }

  /** One HTTP exchange within timeoutMs (connect to the end of the body); the body parsed as JSON when it is. */
  private async exchange(
    method: Dispatcher.HttpMethod,
    path: string,
    options: { headers: Record<string, string>; body?: string },
  ): Promise<{ status: number; body: unknown }> {
    try {
      const response = await request(`${this.baseUrl}${path}`, {
        method,
        headers: options.headers,
        body: options.body,
        dispatcher: this.agent,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await response.body.text();
      return { status: response.statusCode, body: parseJson(text) };
    } catch (err) {
      // The message of a TLS or socket error names no secret; the URL is the account's base URL.
      throw new InterNetworkError(`inter ${path.split('?')[0]}: no answer (${(err as Error).message})`);
    }
  }
}

function checked(answer: { status: number; body: unknown }, what: string) {
  if (answer.status >= 200 && answer.status < 300) return answer;
  throw new InterHttpError(answer.status, answer.body, what);
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text.slice(0, 200);
  }
}

/** Inter's error body in one line: title, detail and the fields it names. */
export function describeError(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const { title, detail, violacoes } = body as Partial<ErrorBody>;
  const fields = Array.isArray(violacoes)
    ? violacoes.map((v) => `${String(v.propriedade)}: ${String(v.razao)}`).join('; ')
    : '';
  return [title, detail, fields]
    .filter((part) => typeof part === 'string' && part !== '')
    .map((part) => ` ${part}`)
    .join(' -');
}
