import { randomUUID } from 'node:crypto';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { PaymentsApiError } from './errors';
import type { components, paths } from './generated/openapi';
import { isRepeatableByDefault, retryingFetch, type FetchFunction, type RetryOptions } from './retry';
import { TokenManager, type TokenOptions } from './tokens';

type Schemas = components['schemas'];
export type SearchRequest = Schemas['SearchRequest'];
export type SearchResultItem = Schemas['SearchResultItem'];
export type CallbackEventSummary = Schemas['CallbackEventSummary'];

/**
 * The generated paths with Idempotency-Key optional where the document requires it: the client
 * adds one to every mutating call that has none, so callers pass it only to choose it.
 */
export type SdkPaths = { [P in keyof paths]: { [M in keyof paths[P]]: OptionalKey<paths[P][M]> } };

type OptionalKey<Op> = Op extends { parameters: { header: { 'Idempotency-Key': string } } }
  ? Omit<Op, 'parameters'> & {
      parameters: Omit<Op['parameters'], 'header'> & {
        header?: Omit<Op['parameters']['header'], 'Idempotency-Key'> & { 'Idempotency-Key'?: string };
      };
    }
  : Op;

export type PaymentsApi = Client<SdkPaths>;

export interface PaymentsClientOptions extends TokenOptions {
  /** The gateway's origin, e.g. https://payments.example.com (paths start with /api/v1). */
  baseUrl: string;
  /** The tenant's integration token (itk_...), exchanged for short-lived JWTs. */
  integrationToken: string;
  /** When and how often a failed call is sent again (network errors, 429, 502, 503, 504). */
  retry?: RetryOptions;
  /**
   * Each attempt is abandoned after this long (default 30 s) and, when repeatable, sent again. To
   * bound a whole call, retries included, pass `signal` (e.g. `AbortSignal.timeout(5000)`) to it.
   */
  timeoutMs?: number;
  /** Makes the Idempotency-Key of a mutating call that has none (default: a random UUID). */
  newIdempotencyKey?: () => string;
  /** The transport under the retries (default: the global fetch). */
  fetch?: FetchFunction;
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const AUTH_PATHS: ReadonlyArray<keyof paths> = ['/api/v1/authenticate', '/api/v1/refresh-token'];

/**
 * POSTs that change nothing (search and consult; history is a GET): they get no Idempotency-Key, so
 * the gateway keeps nothing of them, and they are sent again freely. Checked against the generated paths.
 */
const SAFE_POSTS: ReadonlyArray<keyof paths> = [
  '/api/v1/accounts-receivable/search',
  '/api/v1/accounts-receivable/{uuid}/consult-transaction',
];
const SAFE_POST_PATTERNS = SAFE_POSTS.map((path) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`));

/**
 * The gateway's API for an ERP: `api` is the typed client generated from the OpenAPI document
 * (openapi-fetch), authenticated, idempotent and retrying; the iterators walk every page of a search
 * or of the callback list.
 */
export class PaymentsClient {
  readonly api: PaymentsApi;
  readonly tokens: TokenManager;

  constructor(options: PaymentsClientOptions) {
    const fetch = retryingFetch(
      { ...options.retry, timeoutMs: options.timeoutMs, isRepeatable: isRepeatable },
      options.fetch,
    );
    const base = createClient<paths>({ baseUrl: options.baseUrl, fetch });
    this.tokens = new TokenManager(base, options.integrationToken, options);
    this.api = createClient<SdkPaths>({ baseUrl: options.baseUrl, fetch });
    this.api.use(idempotencyKeys(options.newIdempotencyKey ?? randomUUID), bearer(this.tokens));
  }

  /** Every charge matching the filter, page after page (X-Next-Cursor), in the gateway's order. */
  async *searchReceivables(filter: Omit<SearchRequest, 'cursor'>): AsyncGenerator<SearchResultItem> {
    let cursor: string | undefined;
    do {
      const { data, error, response } = await this.api.POST('/api/v1/accounts-receivable/search', {
        body: { ...filter, ...(cursor === undefined ? {} : { cursor }) },
      });
      if (!data) throw PaymentsApiError.of('POST /api/v1/accounts-receivable/search', response, error);
      yield* data;
      cursor = nextCursor(response);
    } while (cursor !== undefined);
  }

  /** Every callback event (newest first), optionally of one status or one charge, page after page. */
  async *callbacks(
    query: { status?: CallbackEventSummary['status']; limit?: number; receivable_id?: string } = {},
  ): AsyncGenerator<CallbackEventSummary> {
    let cursor: string | undefined;
    do {
      const { data, error, response } = await this.api.GET('/api/v1/callbacks', {
        params: { query: { ...query, ...(cursor === undefined ? {} : { cursor }) } },
      });
      if (!data) throw PaymentsApiError.of('GET /api/v1/callbacks', response, error);
      yield* data;
      cursor = nextCursor(response);
    } while (cursor !== undefined);
  }
}

function nextCursor(response: Response): string | undefined {
  return response.headers.get('x-next-cursor') || undefined;
}

/**
 * Adds an Idempotency-Key to a mutating call without one; retries replay the request, key included.
 * Safe operations and the token exchange get none.
 */
function idempotencyKeys(newKey: () => string): Middleware {
  return {
    onRequest({ request }) {
      const mutating = MUTATING.has(request.method) && !isSafePost(request) && !isAuthPath(request);
      if (mutating && !request.headers.has('idempotency-key')) request.headers.set('Idempotency-Key', newKey());
      return request;
    },
  };
}

/** Sends the current JWT, unless the caller set Authorization itself (the token exchange does). */
function bearer(tokens: TokenManager): Middleware {
  return {
    async onRequest({ request }) {
      if (!request.headers.has('authorization') && !isAuthPath(request))
        request.headers.set('Authorization', `Bearer ${await tokens.accessToken()}`);
      return request;
    },
  };
}

function isAuthPath(request: Request): boolean {
  return (AUTH_PATHS as readonly string[]).includes(new URL(request.url).pathname);
}

function isSafePost(request: Request): boolean {
  const path = new URL(request.url).pathname;
  return request.method === 'POST' && SAFE_POST_PATTERNS.some((pattern) => pattern.test(path));
}

/**
 * Sent again after a failure only when that cannot run it twice: idempotent methods, calls with an
 * Idempotency-Key, safe POSTs, and the token exchange (a second JWT harms nothing).
 */
function isRepeatable(request: Request): boolean {
  return isRepeatableByDefault(request) || isSafePost(request) || isAuthPath(request);
}

/** The data of a successful call; otherwise a PaymentsApiError with the gateway's problem document and request id. */
export function ok<T>(
  result: { data?: T; error?: unknown; response: Response },
  operation = result.response.url ? new URL(result.response.url).pathname : 'the request',
): T {
  if (result.data === undefined || result.error !== undefined)
    throw PaymentsApiError.of(operation, result.response, result.error);
  return result.data;
}
