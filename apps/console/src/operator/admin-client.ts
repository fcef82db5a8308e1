import createClient, { type Client } from 'openapi-fetch';
import { OPERATOR_CREDENTIAL_PREFIX } from '@payments/contracts';
import { asProblem, gatewayFetch, GatewayError, type GatewayApi, type GatewayFetchOptions } from '../gateway/problem';
import { sessionAuthorization } from '../session/sessions-api';
import type { components, paths } from './generated/admin-openapi';

/**
 * The console's client of the gateway's admin API: openapi-fetch over the types generated from the
 * admin OpenAPI document of libs/contracts (generated/admin-openapi.ts), so a shape the gateway
 * changes fails the console's typecheck rather than a page at run time. One client per request: it
 * carries the operator's session id (`Authorization: Session <id>`), which the admin API checks on
 * every call (a signed-out or revoked session stops at once), and says for whom and which request
 * (X-Forwarded-For, X-Request-Id) so the audit names them. Scripts and tests may pass an `opk_`
 * credential instead (`Authorization: Bearer`); no operator credential ever sits in a cookie.
 */
export type AdminApi = Client<paths>;
export type AdminSchemas = components['schemas'];
export type AdminProblem = AdminSchemas['Problem'];

/** Who calls: a console session of an operator, or (scripts, tests) an operator credential. */
export type AdminAuth = { sessionId: string } | { credential: string };

export type AdminClientOptions = Pick<GatewayFetchOptions, 'gatewayTimeoutMs'> &
  AdminAuth & {
    /** The admin port's origin, e.g. http://127.0.0.1:3600 (paths start with /admin/v1). */
    baseUrl: string;
    /** The end user's address and the request id, passed on for the gateway's audit. */
    caller?: Record<string, string>;
  };

const ADMIN_API: GatewayApi = 'the admin API';

/** The deadline and the failures are the public API's (gatewayFetch): one rule for both clients. */
export function adminClient(options: AdminClientOptions): AdminApi {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { ...options.caller, authorization: authorizationOf(options), accept: 'application/json' },
    fetch: gatewayFetch({ gatewayTimeoutMs: options.gatewayTimeoutMs, api: ADMIN_API }),
  });
}

function authorizationOf(auth: AdminAuth): string {
  return 'sessionId' in auth ? sessionAuthorization(auth.sessionId).authorization : `Bearer ${auth.credential}`;
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
