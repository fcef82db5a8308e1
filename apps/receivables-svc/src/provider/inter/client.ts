import { rootCertificates } from 'node:tls';
import { Agent, request, type Dispatcher } from 'undici';
import type { TSchema } from '@sinclair/typebox';
import {
  CHECKING_ACCOUNT_HEADER,
  INTER_COBRANCA_SCOPE,
  INTER_PATHS,
  TokenResponse,
  interViolations,
  type ErrorBody,
} from '@payments/inter-cobranca';
import type { InterCredentials } from '@payments/contracts';
import { ProviderUnavailableError } from '../../domain/ports';
import { BudgetExhaustedError, type CallLimit, type WaitReason } from '../../db/call-budget';

/** Inter answered with a status we do not treat as success (after one token refresh on 401). */
export class InterHttpError extends ProviderUnavailableError {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`inter ${what}: HTTP ${status}${describeError(body)}`);
  }

  /** Statuses that refuse the request itself: for a create, the charge is looked up before it is rejected. */
  get isRefusal(): boolean {
    return this.status === 400 || this.status === 404 || this.status === 422;
  }
}

/** The request did not get an answer (refused connection or TLS handshake, reset, timeout). */
export class InterNetworkError extends ProviderUnavailableError {}

/** Inter answered 2xx with a body that is not what its contract says. */
export class InterUnexpectedAnswerError extends ProviderUnavailableError {}

/**
 * Inter's endpoints as its reference limits them (each its own per-minute budget; the webhook's GET,
 * PUT and DELETE share one, the most careful reading of "5 calls a minute" each).
 */
export const INTER_ENDPOINTS = [
  'token',
  'create',
  'consult',
  'list',
  'cancel',
  'pdf',
  'webhook',
  'callbacks',
  'callbacks-retry',
] as const;
export type InterEndpoint = (typeof INTER_ENDPOINTS)[number];

/**
 * Calls a minute in production, from Inter's API reference (developers.inter.co/references/cobranca-bolepix);
 * the token endpoint's 5 is what integrators observe (not published).
 */
export const INTER_DEFAULT_LIMITS: Record<InterEndpoint, number> = {
  token: 5,
  create: 120,
  consult: 120,
  list: 120,
  cancel: 120,
  pdf: 120,
  webhook: 5,
  callbacks: 10,
  'callbacks-retry': 5,
};

export interface InterCall {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string>;
  json?: unknown;
  /** What the call is, for error messages ("create", "consult" ...). */
  what: string;
  /** Whose budget it spends; derived from method and path when absent. */
  endpoint?: InterEndpoint;
}

/** The per-minute budgets shared by every instance (Postgres: db/call-budget.ts). */
export interface InterCallBudget {
  take(
    bucket: string,
    endpoint: string,
    limit: CallLimit,
    onWait?: (reason: WaitReason, ms: number) => void,
  ): Promise<void>;
  block(bucket: string, endpoint: string, until: Date, limit: CallLimit): Promise<void>;
}

/** The one token per bank account shared by every instance (Postgres: db/bank-tokens.ts). */
export interface InterTokenStore {
  /** `prepare` runs before the lock is taken, only when no usable token is stored (the token budget). */
  token(
    bankAccount: string,
    issue: () => Promise<{ value: string; usableForMs: number }>,
    prepare?: () => Promise<void>,
  ): Promise<{ value: string; usableUntil: number }>;
  drop(bankAccount: string, failed: string): Promise<void>;
}

/** What instances share about a bank account: its budgets and its token. */
export interface InterShared {
  budget: InterCallBudget;
  tokens: InterTokenStore;
  limits: Record<InterEndpoint, CallLimit>;
}

/** Told what operators must see (metrics and warning logs in the service; never a secret). */
export interface InterObserver {
  /** A call waited for its budget (or for the bank's Retry-After). */
  waited?(accountId: string, endpoint: InterEndpoint, reason: WaitReason, ms: number): void;
  /** Inter answered 429. */
  rateLimited?(accountId: string, endpoint: InterEndpoint, retryAfterMs: number): void;
  /** Inter answered 403: calls to the endpoint wait `delayMs` (growing while it lasts). */
  forbidden?(accountId: string, endpoint: InterEndpoint, delayMs: number): void;
  /** The account's webhook points elsewhere and is not replaced (no --replace-webhook). */
  webhookConflict?(accountId: string, registeredUrl: string, ourUrl: string): void;
}

export interface InterClientOptions {
  baseUrl: string;
  credentials: InterCredentials;
  /** Deadline of one HTTP exchange (connect to the end of the answer). */
  timeoutMs: number;
  /** A CA to trust besides the public ones, read when the first call is made (the sandbox may create it later). */
  trustedCa?: () => string | undefined;
  /** The bank account (tenant and account key): the key of its shared budgets and token. */
  bankAccount: string;
  /** The account version's id, for operators (logs, metrics). */
  accountId: string;
  /** x-conta-corrente: the checking account the calls are for (digits, no leading zeros), when the account names one. */
  checkingAccount?: string | null;
  shared?: InterShared;
  observer?: InterObserver;
}

/** A token is used until this long before it expires. */
const TOKEN_MARGIN_MS = 60_000;
/** A 403's delay doubles from this while it lasts, up to the maximum. */
const FORBIDDEN_FIRST_MS = 1_000;
const FORBIDDEN_MAX_MS = 10 * 60_000;

interface Answer {
  status: number;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * One Inter bank account's connection: its client certificate (an undici Agent of its own, mutual TLS)
 * and its OAuth2 token. With `shared` (production), every call first takes a token of its endpoint's
 * budget shared by all instances, a 429 blocks the endpoint for its Retry-After for all of them, a 403
 * blocks it for a delay that grows while it lasts, and the token is the bank account's one token in
 * Postgres. A 401 drops the token that failed (not a newer one) and the call is made once more.
 */
export class InterAccountClient {
  private agent: Agent | null = null;
  private token: { value: string; usableUntil: number } | null = null;
  private pendingToken: Promise<string> | null = null;
  private forbiddenStreak = 0;
  /** Token requests this client made (observability and tests). */
  tokenRequests = 0;

  constructor(private readonly options: InterClientOptions) {}

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  /** Calls the API with the account's token; a non-2xx answer is an InterHttpError, no answer an InterNetworkError. */
  async call(call: InterCall): Promise<{ status: number; body: unknown }> {
    const endpoint = call.endpoint ?? endpointOf(call);
    const token = await this.bearer();
    let answer = await this.paced(endpoint, () => this.send(call, token));
    if (answer.status === 401) {
      await this.dropToken(token);
      const fresh = await this.bearer();
      answer = await this.paced(endpoint, () => this.send(call, fresh));
    }
    return this.checked(answer, call.what, endpoint);
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
    await this.agent?.close();
  }

  /**
   * One exchange within the endpoint's shared budget; a 429 blocks the endpoint for its Retry-After for
   * every instance, and the exchange is made once more when that wait is within the bound. `prepaid`:
   * the budget was taken before (the token request, made while holding the shared token's lock, where
   * nothing waits: a 429 there leaves the token for a later call).
   */
  private async paced(endpoint: InterEndpoint, exchange: () => Promise<Answer>, prepaid = false): Promise<Answer> {
    if (!prepaid) await this.take(endpoint);
    const answer = await exchange();
    if (answer.status !== 429 || !this.options.shared) return answer;
    const retryAfterMs = retryAfter(answer.headers['retry-after']);
    this.options.observer?.rateLimited?.(this.options.accountId, endpoint, retryAfterMs);
    await this.options.shared.budget.block(
      this.options.bankAccount,
      endpoint,
      new Date(Date.now() + retryAfterMs),
      this.options.shared.limits[endpoint],
    );
    if (prepaid) return answer;
    await this.take(endpoint);
    return exchange();
  }

  /** Waits for one call of the endpoint's shared budget (bounded: beyond it, ProviderUnavailableError). */
  private async take(endpoint: InterEndpoint): Promise<void> {
    const shared = this.options.shared;
    if (!shared) return;
    try {
      await shared.budget.take(this.options.bankAccount, endpoint, shared.limits[endpoint], (reason, ms) =>
        this.options.observer?.waited?.(this.options.accountId, endpoint, reason, ms),
      );
    } catch (err) {
      if (err instanceof BudgetExhaustedError) throw new ProviderUnavailableError(`inter ${err.message}`);
      throw new ProviderUnavailableError(`inter ${endpoint}: call budget unavailable (${(err as Error).message})`);
    }
  }

  /** 2xx passes; a 403 blocks the endpoint for a growing delay (all instances) and is shown to operators. */
  private async checked(answer: Answer, what: string, endpoint: InterEndpoint): Promise<Answer> {
    if (answer.status >= 200 && answer.status < 300) {
      this.forbiddenStreak = 0;
      return answer;
    }
    if (answer.status === 403) {
      const delayMs = Math.min(FORBIDDEN_MAX_MS, FORBIDDEN_FIRST_MS * 2 ** this.forbiddenStreak);
      this.forbiddenStreak += 1;
      this.options.observer?.forbidden?.(this.options.accountId, endpoint, delayMs);
      if (this.options.shared)
        await this.options.shared.budget
          .block(
            this.options.bankAccount,
            endpoint,
            new Date(Date.now() + delayMs),
            this.options.shared.limits[endpoint],
          )
          .catch(() => undefined); // the 403 itself is what the caller needs to hear
    }
    throw new InterHttpError(answer.status, answer.body, what);
  }

  private bearer(): Promise<string> {
    if (this.token && Date.now() < this.token.usableUntil) return Promise.resolve(this.token.value);
    this.pendingToken ??= this.sharedToken().finally(() => (this.pendingToken = null));
    return this.pendingToken;
  }

  /** The bank account's token: the one every instance shares when there is a store, else this client's own. */
  private async sharedToken(): Promise<string> {
    const store = this.options.shared?.tokens;
    let token: { value: string; usableUntil: number };
    if (store) {
      try {
        // The token budget is taken before the shared token's lock: nothing waits while holding it.
        token = await store.token(
          this.options.bankAccount,
          () => this.requestToken(true),
          () => this.take('token'),
        );
      } catch (err) {
        if (err instanceof ProviderUnavailableError) throw err;
        throw new ProviderUnavailableError(`inter token: the shared token is unavailable (${(err as Error).message})`);
      }
    } else {
      const issued = await this.requestToken();
      token = { value: issued.value, usableUntil: Date.now() + issued.usableForMs };
    }
    this.token = token;
    return token.value;
  }

  /** A 401 with `failed`: dropped here and in the store only if it is still the token there. */
  private async dropToken(failed: string): Promise<void> {
    if (this.token?.value === failed) this.token = null;
    await this.options.shared?.tokens.drop(this.options.bankAccount, failed).catch(() => undefined);
  }

  private async requestToken(prepaid = false): Promise<{ value: string; usableForMs: number }> {
    this.tokenRequests += 1;
    const { credentials } = this.options;
    const form = new URLSearchParams({
      client_id: credentials.client_id,
      client_secret: credentials.client_secret,
      grant_type: 'client_credentials',
      scope: INTER_COBRANCA_SCOPE,
    }).toString();
    const answer = await this.checked(
      await this.paced(
        'token',
        () =>
          this.exchange('POST', INTER_PATHS.token, {
            headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
            body: form,
          }),
        prepaid,
      ),
      'token',
      'token',
    );
    if (interViolations(TokenResponse, answer.body).length > 0)
      throw new InterUnexpectedAnswerError('inter token: unexpected answer');
    const token = answer.body as TokenResponse;
    return { value: token.access_token, usableForMs: Math.max(0, token.expires_in * 1_000 - TOKEN_MARGIN_MS) };
  }

  private send(call: InterCall, token: string): Promise<Answer> {
    const query = call.query ? `?${new URLSearchParams(call.query).toString()}` : '';
    const checking = this.options.checkingAccount;
    return this.exchange(call.method, `${call.path}${query}`, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(checking ? { [CHECKING_ACCOUNT_HEADER]: checking } : {}),
        ...(call.json !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: call.json !== undefined ? JSON.stringify(call.json) : undefined,
    });
  }

  /** The Agent with the client certificate, made at the first call (the trusted CA is read then). */
  private dispatcher(): Agent {
    if (this.agent) return this.agent;
    const { credentials, timeoutMs } = this.options;
    let trustedCaPem: string | undefined;
    try {
      trustedCaPem = this.options.trustedCa?.();
    } catch (err) {
      throw new InterNetworkError(`inter: the trusted CA cannot be read (${(err as Error).message})`);
    }
    this.agent = new Agent({
      connect: {
        cert: credentials.cert_pem,
        key: credentials.key_pem,
        // An extra CA (the bank sandbox's) trusted besides the public ones Inter's certificate chains to.
        ...(trustedCaPem ? { ca: [...rootCertificates, trustedCaPem] } : {}),
        timeout: timeoutMs,
      },
    });
    return this.agent;
  }

  /** One HTTP exchange within timeoutMs (connect to the end of the body); the body parsed as JSON when it is. */
  private async exchange(
    method: Dispatcher.HttpMethod,
    path: string,
    options: { headers: Record<string, string>; body?: string },
  ): Promise<Answer> {
    const dispatcher = this.dispatcher();
    const { timeoutMs } = this.options;
    try {
      const response = await request(`${this.options.baseUrl}${path}`, {
        method,
        headers: options.headers,
        body: options.body,
        dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await response.body.text();
      return { status: response.statusCode, body: parseJson(text), headers: response.headers };
    } catch (err) {
      // The message of a TLS or socket error names no secret; the URL is the account's base URL.
      throw new InterNetworkError(`inter ${path.split('?')[0]}: no answer (${(err as Error).message})`);
    }
  }
}

/** Which budget a call spends, from its method and path. */
export function endpointOf(call: Pick<InterCall, 'method' | 'path'>): InterEndpoint {
  const path = call.path.replace(/\/+$/, '');
  if (path === INTER_PATHS.token) return 'token';
  if (path.endsWith('/webhook/callbacks/retry')) return 'callbacks-retry';
  if (path.endsWith('/webhook/callbacks')) return 'callbacks';
  if (path.endsWith('/webhook')) return 'webhook';
  if (path === INTER_PATHS.charges) return call.method === 'POST' ? 'create' : 'list';
  if (path.endsWith('/cancelar')) return 'cancel';
  if (path.endsWith('/pdf')) return 'pdf';
  return 'consult';
}

/** Retry-After in ms (seconds or an HTTP date); a minute when absent or unreadable. */
function retryAfter(header: string | string[] | undefined): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && /^\d+$/.test(value.trim())) return Number(value.trim()) * 1_000;
  const date = value === undefined ? NaN : Date.parse(value);
  return Number.isNaN(date) ? 60_000 : Math.max(0, date - Date.now());
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

/** x-conta-corrente as Inter takes it: the account's digits (with its check digit), no leading zeros. */
export function checkingAccountHeader(account: string | null): string | null {
  const digits = (account ?? '').replace(/\D/g, '').replace(/^0+/, '');
  return digits === '' ? null : digits;
}
