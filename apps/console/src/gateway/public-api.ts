import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '@payments/sdk';
import { jwtClaims } from '@payments/sdk';
import { asProblem, gatewayFetch, GatewayError, type GatewayFetchOptions } from './problem';

/**
 * The gateway's public API, typed by the SDK's generated paths (libs/sdk, from the OpenAPI document):
 * no hand-copied shapes. One client for the process; every call carries the session's JWT itself.
 */
export type PublicApi = Client<paths>;

export function publicApi(gatewayUrl: string, options: Pick<GatewayFetchOptions, 'gatewayTimeoutMs'> = {}): PublicApi {
  return createClient<paths>({ baseUrl: gatewayUrl, fetch: gatewayFetch(options) });
}

/** The Authorization header of a tenant's call. */
export function bearer(jwt: string): { Authorization: string } {
  return { Authorization: `Bearer ${jwt}` };
}

/** A call's data, or a GatewayError with the gateway's status and problem document. */
export function ok<T>(operation: string, result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined || result.error !== undefined)
    throw new GatewayError(operation, result.response.status, asProblem(result.error, result.response));
  return result.data;
}

/** A JWT the gateway issued, with what the session needs of it. */
export interface IssuedToken {
  jwt: string;
  tenantId: string;
  issuedAt: number;
  expiresAt: number;
}

/** Integration token -> JWT (POST /api/v1/authenticate). The integration token is not kept. */
export async function authenticate(api: PublicApi, integrationToken: string): Promise<IssuedToken> {
  const data = ok(
    'POST /api/v1/authenticate',
    await api.POST('/api/v1/authenticate', { headers: bearer(integrationToken) }),
  );
  return issued(data.access_token, data.expires_in);
}

/** JWT -> a fresh JWT (POST /api/v1/refresh-token); undefined when the gateway refuses it (401). */
export async function refresh(api: PublicApi, jwt: string): Promise<IssuedToken | undefined> {
  const result = await api.POST('/api/v1/refresh-token', { headers: bearer(jwt) });
  if (result.response.status === 401) return undefined;
  const data = ok('POST /api/v1/refresh-token', result);
  return issued(data.access_token, data.expires_in);
}

function issued(jwt: string, expiresIn: number): IssuedToken {
  // Read, not verified: the gateway verifies it on every call; the console only schedules and labels.
  const claims = jwtClaims(jwt);
  const tenantId = subjectOf(jwt);
  if (!tenantId) throw new Error('the gateway answered an access token without a subject (sub)');
  const now = Date.now();
  return {
    jwt,
    tenantId,
    issuedAt: claims.iat !== undefined ? claims.iat * 1000 : now,
    expiresAt: claims.exp !== undefined ? claims.exp * 1000 : now + expiresIn * 1000,
  };
}

/** The JWT's sub (the tenant id), or undefined when it has none or is no JWT. */
function subjectOf(jwt: string): string | undefined {
  try {
    const payload: unknown = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'));
    const sub = typeof payload === 'object' && payload !== null ? (payload as { sub?: unknown }).sub : undefined;
    return typeof sub === 'string' && sub !== '' ? sub : undefined;
  } catch {
    return undefined;
  }
}
