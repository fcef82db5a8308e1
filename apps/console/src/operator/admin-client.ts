import createClient, { type Client } from 'openapi-fetch';
import { OPERATOR_CREDENTIAL_PREFIX } from '@payments/contracts';
import { GatewayError } from '../gateway/problem';
import type { components, paths } from './generated/admin-openapi';

/**
 * The console's client of the gateway's admin API: openapi-fetch over the types generated from the
 * admin OpenAPI document of libs/contracts (generated/admin-openapi.ts), so a shape the gateway
 * changes fails the console's typecheck rather than a page at run time. One client per request: it
 * carries the operator's credential, which the admin API checks on every call (a revoked one stops
 * at once).
 */
export type AdminApi = Client<paths>;
export type AdminSchemas = components['schemas'];
export type AdminProblem = AdminSchemas['Problem'];

export interface AdminClientOptions {
  /** The admin port's origin, e.g. http://127.0.0.1:3600 (paths start with /admin/v1). */
  baseUrl: string;
  /** The operator credential (opk_...). */
  credential: string;
  /** The transport (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Give up on a call after this long (default 10 s): a page waits for no hung gateway. */
  timeoutMs?: number;
}

export function adminClient(options: AdminClientOptions): AdminApi {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const transport = options.fetch ?? ((request: Request) => fetch(request));
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { authorization: `Bearer ${options.credential}`, accept: 'application/json' },
    fetch: (request) => transport(new Request(request, { signal: AbortSignal.timeout(timeoutMs) })),
  });
}

/**
 * Whether the admin API takes this credential, at sign-in: the cheapest authenticated read (one audit
 * row). Throws AdminApiError (401) when it does not.
 */
export async function checkOperatorCredential(baseUrl: string, credential: string): Promise<void> {
  const admin = adminClient({ baseUrl, credential });
  await expectData('GET /admin/v1/audit', admin.GET('/admin/v1/audit', { params: { query: { limit: 1 } } }));
}

/** Operator credentials look like `opk_...`; anything else is refused before calling the gateway. */
export function looksLikeOperatorCredential(text: string): boolean {
  return text.startsWith(OPERATOR_CREDENTIAL_PREFIX) && /^[A-Za-z0-9_-]{8,200}$/.test(text);
}

/**
 * A call the admin API refused, or could not be asked: the problem document to show on the page
 * (the gateway's own, or one the console makes for a gateway out of reach). A GatewayError, so the
 * console's error handler renders it as the problem page, and a 401 (a revoked credential) ends the
 * session.
 */
export class AdminApiError extends GatewayError {
  // `declare`: narrows the type only (a field here would be set again, to undefined, after super()).
  declare readonly problem: AdminProblem;

  constructor(operation: string, problem: AdminProblem) {
    super(operation, problem.status, problem);
  }
}

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The data of a successful call, or an AdminApiError holding the problem. openapi-fetch's
 * "data or error" is narrowed here once, so pages read a typed value or catch one error type.
 */
export async function expectData<T>(operation: string, call: Promise<FetchResult<T>>): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await call;
  } catch (err) {
    throw new AdminApiError(operation, unreachable(err));
  }
  if (result.data !== undefined && result.response.ok) return result.data;
  throw new AdminApiError(operation, asProblem(result.error, result.response));
}

/** The gateway's problem document, or one made from the status when the body is none (e.g. a proxy's 502). */
export function asProblem(body: unknown, response: Pick<Response, 'status' | 'statusText'>): AdminProblem {
  if (isProblem(body)) return body;
  return {
    type: 'about:blank',
    title: response.statusText || 'Error',
    status: response.status,
    detail: `the admin API answered ${response.status} without a problem document`,
    code: response.status >= 500 ? 'service_unavailable' : 'internal_error',
  };
}

function isProblem(value: unknown): value is AdminProblem {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.status === 'number' && typeof v.title === 'string' && typeof v.code === 'string';
}

function unreachable(err: unknown): AdminProblem {
  // By name: the DOMException of an aborted fetch is no instance of this realm's Error under jest.
  const name = typeof err === 'object' && err !== null ? (err as { name?: unknown }).name : undefined;
  const timedOut = name === 'TimeoutError' || name === 'AbortError';
  return {
    type: 'about:blank',
    title: 'Bad Gateway',
    status: 502,
    detail: timedOut ? 'the admin API did not answer in time' : 'the admin API is out of reach',
    code: 'service_unavailable',
  };
}
