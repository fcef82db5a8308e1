import { rootCertificates } from 'node:tls';
import { Agent, request, type Dispatcher } from 'undici';
import type { InterCredentials } from '@payments/contracts';
import { ProviderUnavailableError } from '../../domain/ports';
import { BudgetExhaustedError } from '../../db/call-budget';
import { BankHttpError, BankNetworkError, BankUnexpectedAnswerError } from './bank-errors';
import type { BankObserver, BankShared } from './bank-shared';

/**
 * The OAuth2 client credentials over mutual TLS that the banks' APIs share (Inter's Cobrança API, any
 * bank's PIX API): one client certificate per bank account, its token shared by every instance, and
 * per-endpoint call budgets shared the same way. What varies per API (its root, token URL and scope,
 * the key of its shared token, its endpoints and their limits, its extra headers) is an option.
 */

export interface BankCall<E extends string = string> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Appended to the client's API root. */
  path: string;
  query?: Record<string, string>;
  json?: unknown;
  /** What the call is, for error messages ("create", "consult" ...). */
  what: string;
  /** Whose budget it spends; the client's classifier decides when absent. */
  endpoint?: E;
}

export interface BankClientOptions<E extends string> {
  /** Names the API in error messages ("inter", "pix"). */
  bank: string;
  /** The API root the calls' paths are appended to. */
  apiRoot: string;
  /** The OAuth2 token: its absolute URL and the scope asked for. */
  token: { url: string; scope: string };
  credentials: InterCredentials;
  /** Deadline of one HTTP exchange (connect to the end of the answer). */
  timeoutMs: number;
  /** A CA to trust besides the public ones, read when the first call is made (the sandbox may create it later). */
  trustedCa?: () => string | undefined;
  /** The bank account (tenant and account key): the key of its shared budgets (the token endpoint's included). */
  bankAccount: string;
  /** The key of the shared token; default the bank account (two APIs of one account with separate tokens differ here). */
  tokenKey?: string;
  /** The account version's id, for operators (logs, metrics). */
  accountId: string;
  /** Headers every call carries (x-conta-corrente ...). */
  headers?: Record<string, string>;
  /** Which budget a call spends when it names none. */
  endpointOf(call: Pick<BankCall<E>, 'method' | 'path'>): E;
  shared?: BankShared<E>;
  observer?: BankObserver;
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
 * One bank account's connection to one API: its client certificate (an undici Agent of its own, mutual
 * TLS) and its OAuth2 token. With `shared` (production), every call first takes a token of its
 * endpoint's budget shared by all instances, a 429 blocks the endpoint for its Retry-After for all of
 * them, a 403 blocks it for a delay that grows while it lasts, and the token is the one in Postgres under
 * `tokenKey`. A 401 drops the token that failed (not a newer one) and the call is made once more.
 */
export class BankAccountClient<E extends string> {
  private agent: Agent | null = null;
  private token: { value: string; usableUntil: number } | null = null;
  private pendingToken: Promise<string> | null = null;
  private forbiddenStreak = 0;
  /** Token requests this client made (observability and tests). */
  tokenRequests = 0;

  constructor(protected readonly bankOptions: BankClientOptions<E>) {}

  get apiRoot(): string {
    return this.bankOptions.apiRoot;
  }

  /** Calls the API with the account's token; a non-2xx answer is a BankHttpError, no answer a BankNetworkError. */
  async call(call: BankCall<E>): Promise<{ status: number; body: unknown }> {
    const endpoint = call.endpoint ?? this.bankOptions.endpointOf(call);
    const token = await this.bearer();
    let answer = await this.paced(endpoint, () => this.send(call, token));
    if (answer.status === 401) {
      await this.dropToken(token);
      const fresh = await this.bearer();
      answer = await this.paced(endpoint, () => this.send(call, fresh));
    }
    return this.checked(answer, call.what, endpoint);
  }

  /** Calls and reads the 2xx body with `read` (a BankUnexpectedAnswerError when it throws). */
  async callAndRead<T>(call: BankCall<E>, read: (body: unknown) => T): Promise<T> {
    const { body } = await this.call(call);
    try {
      return read(body);
    } catch (err) {
      throw new BankUnexpectedAnswerError(
        `${this.bankOptions.bank} ${call.what}: unexpected answer (${(err as Error).message})`,
      );
    }
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
  private async paced(endpoint: E | 'token', exchange: () => Promise<Answer>, prepaid = false): Promise<Answer> {
    if (!prepaid) await this.take(endpoint);
    const answer = await exchange();
    const shared = this.bankOptions.shared;
    if (answer.status !== 429 || !shared) return answer;
    const retryAfterMs = retryAfter(answer.headers['retry-after']);
    this.bankOptions.observer?.rateLimited?.(this.bankOptions.accountId, endpoint, retryAfterMs);
    await shared.budget.block(
      this.bankOptions.bankAccount,
      endpoint,
      new Date(Date.now() + retryAfterMs),
      shared.limits[endpoint],
    );
    if (prepaid) return answer;
    await this.take(endpoint);
    return exchange();
  }

  /** Waits for one call of the endpoint's shared budget (bounded: beyond it, ProviderUnavailableError). */
  private async take(endpoint: E | 'token'): Promise<void> {
    const shared = this.bankOptions.shared;
    if (!shared) return;
    const bank = this.bankOptions.bank;
    try {
      await shared.budget.take(this.bankOptions.bankAccount, endpoint, shared.limits[endpoint], (reason, ms) =>
        this.bankOptions.observer?.waited?.(this.bankOptions.accountId, endpoint, reason, ms),
      );
    } catch (err) {
      if (err instanceof BudgetExhaustedError) throw new ProviderUnavailableError(`${bank} ${err.message}`);
      throw new ProviderUnavailableError(`${bank} ${endpoint}: call budget unavailable (${(err as Error).message})`);
    }
  }

  /** 2xx passes; a 403 blocks the endpoint for a growing delay (all instances) and is shown to operators. */
  private async checked(answer: Answer, what: string, endpoint: E | 'token'): Promise<Answer> {
    if (answer.status >= 200 && answer.status < 300) {
      this.forbiddenStreak = 0;
      return answer;
    }
    const { shared, observer, accountId, bankAccount, bank } = this.bankOptions;
    if (answer.status === 403) {
      const delayMs = Math.min(FORBIDDEN_MAX_MS, FORBIDDEN_FIRST_MS * 2 ** this.forbiddenStreak);
      this.forbiddenStreak += 1;
      observer?.forbidden?.(accountId, endpoint, delayMs);
      if (shared)
        await shared.budget
          .block(bankAccount, endpoint, new Date(Date.now() + delayMs), shared.limits[endpoint])
          .catch(() => undefined); // the 403 itself is what the caller needs to hear
    }
    throw new BankHttpError(answer.status, answer.body, what, bank);
  }

  private bearer(): Promise<string> {
    if (this.token && Date.now() < this.token.usableUntil) return Promise.resolve(this.token.value);
    this.pendingToken ??= this.sharedToken().finally(() => (this.pendingToken = null));
    return this.pendingToken;
  }

  private get tokenKey(): string {
    return this.bankOptions.tokenKey ?? this.bankOptions.bankAccount;
  }

  /** The account's token for this API: the one every instance shares when there is a store, else this client's own. */
  private async sharedToken(): Promise<string> {
    const store = this.bankOptions.shared?.tokens;
    let token: { value: string; usableUntil: number };
    if (store) {
      try {
        // The token budget is taken before the shared token's lock: nothing waits while holding it.
        token = await store.token(
          this.tokenKey,
          () => this.requestToken(true),
          () => this.take('token'),
        );
      } catch (err) {
        if (err instanceof ProviderUnavailableError) throw err;
        throw new ProviderUnavailableError(
          `${this.bankOptions.bank} token: the shared token is unavailable (${(err as Error).message})`,
        );
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
    await this.bankOptions.shared?.tokens.drop(this.tokenKey, failed).catch(() => undefined);
  }

  private async requestToken(prepaid = false): Promise<{ value: string; usableForMs: number }> {
    this.tokenRequests += 1;
    const { credentials, token } = this.bankOptions;
    const form = new URLSearchParams({
      client_id: credentials.client_id,
      client_secret: credentials.client_secret,
      grant_type: 'client_credentials',
      scope: token.scope,
    }).toString();
    const answer = await this.checked(
      await this.paced(
        'token',
        () =>
          this.exchange('POST', token.url, {
            headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
            body: form,
          }),
        prepaid,
      ),
      'token',
      'token',
    );
    const issued = tokenOf(answer.body);
    if (!issued) throw new BankUnexpectedAnswerError(`${this.bankOptions.bank} token: unexpected answer`);
    return { value: issued.accessToken, usableForMs: Math.max(0, issued.expiresInS * 1_000 - TOKEN_MARGIN_MS) };
  }

  private send(call: BankCall<E>, token: string): Promise<Answer> {
    const query = call.query ? `?${new URLSearchParams(call.query).toString()}` : '';
    return this.exchange(call.method, `${this.bankOptions.apiRoot}${call.path}${query}`, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...this.bankOptions.headers,
        ...(call.json !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: call.json !== undefined ? JSON.stringify(call.json) : undefined,
    });
  }

  /** The Agent with the client certificate, made at the first call (the trusted CA is read then). */
  private dispatcher(): Agent {
    if (this.agent) return this.agent;
    const { credentials, timeoutMs, bank } = this.bankOptions;
    let trustedCaPem: string | undefined;
    try {
      trustedCaPem = this.bankOptions.trustedCa?.();
    } catch (err) {
      throw new BankNetworkError(`${bank}: the trusted CA cannot be read (${(err as Error).message})`);
    }
    this.agent = new Agent({
      connect: {
        cert: credentials.cert_pem,
        key: credentials.key_pem,
        // An extra CA (the bank sandbox's) trusted besides the public ones the bank's certificate chains to.
        ...(trustedCaPem ? { ca: [...rootCertificates, trustedCaPem] } : {}),
        timeout: timeoutMs,
      },
    });
    return this.agent;
  }

  /** One HTTP exchange within timeoutMs (connect to the end of the body); the body parsed as JSON when it is. */
  private async exchange(
    method: Dispatcher.HttpMethod,
    url: string,
    options: { headers: Record<string, string>; body?: string },
  ): Promise<Answer> {
    const dispatcher = this.dispatcher();
    const { timeoutMs, bank } = this.bankOptions;
    try {
      const response = await request(url, {
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
      // The message of a TLS or socket error names no secret; the path is the API's own.
      throw new BankNetworkError(`${bank} ${new URL(url).pathname}: no answer (${(err as Error).message})`);
    }
  }
}

/** An OAuth2 token answer: access_token and expires_in (seconds), or null when it is not one. */
function tokenOf(body: unknown): { accessToken: string; expiresInS: number } | null {
  if (typeof body !== 'object' || body === null) return null;
  const { access_token, expires_in } = body as Record<string, unknown>;
  if (typeof access_token !== 'string' || access_token === '') return null;
  if (typeof expires_in !== 'number' || !Number.isFinite(expires_in) || expires_in <= 0) return null;
  return { accessToken: access_token, expiresInS: expires_in };
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

/** x-conta-corrente as Inter takes it: the account's digits (with its check digit), no leading zeros. */
export function checkingAccountHeader(account: string | null): string | null {
  const digits = (account ?? '').replace(/\D/g, '').replace(/^0+/, '');
  return digits === '' ? null : digits;
}
