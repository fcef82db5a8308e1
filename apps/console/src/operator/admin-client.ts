import createClient, { type Client } from 'openapi-fetch';
import { OPERATOR_CREDENTIAL_PREFIX } from '@payments/contracts';
import { asProblem, gatewayFetch, GatewayError, type GatewayApi, type GatewayFetchOptions } from '../gateway/problem';
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

export interface AdminClientOptions extends Pick<GatewayFetchOptions, 'gatewayTimeoutMs'> {
  /** The admin port's origin, e.g. http://127.0.0.1:3600 (paths start with /admin/v1). */
  baseUrl: string;
  /** The operator credential (opk_...). */
  credential: string;
}

const ADMIN_API: GatewayApi = 'the admin API';

/** The deadline and the failures are the public API's (gatewayFetch): one rule for both clients. */
export function adminClient(options: AdminClientOptions): AdminApi {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { authorization: `Bearer ${options.credential}`, accept: 'application/json' },
    fetch: gatewayFetch({ gatewayTimeoutMs: options.gatewayTimeoutMs, api: ADMIN_API }),
  });
}

/**
 * Whether the admin API takes this credential, at sign-in: the cheapest authenticated read (one audit
 * row). Throws AdminApiError (401) when it does not.
 */
export async function checkOperatorCredential(admin: AdminApi): Promise<void> {
  await expectData('GET /admin/v1/audit', admin.GET('/admin/v1/audit', { params: { query: { limit: 1 } } }));
}

/** Operator credentials look like `opk_...`; anything else is refused before calling the gateway. */
export function looksLikeOperatorCredential(text: string): boolean {
  return text.startsWith(OPERATOR_CREDENTIAL_PREFIX) && /^[A-Za-z0-9_-]{8,200}$/.test(text);
}

/**
 * A call the admin API refused: its problem document, typed by the admin API's own schema. A
 * GatewayError, so the console's error handler renders it as the problem page, and a 401 (a revoked
 * credential) ends the session. (An admin API out of reach is the GatewayUnreachableError of every
 * gateway call.)
 */
export class AdminApiError extends GatewayError {
  override readonly name: string = 'AdminApiError';
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
 * "data or error" is narrowed here once, so pages read a typed value or catch one error type (a call
 * that got no answer rejects with gatewayFetch's GatewayUnreachableError, left as it is).
 */
export async function expectData<T>(operation: string, call: Promise<FetchResult<T>>): Promise<T> {
  const result = await call;
  if (result.data !== undefined && result.response.ok) return result.data;
  throw new AdminApiError(operation, asProblem(result.error, result.response, ADMIN_API));
}
