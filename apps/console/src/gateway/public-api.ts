import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '@payments/sdk';
import { asProblem, gatewayFetch, GatewayError, type GatewayFetchOptions } from './problem';

/**
 * The gateway's public API, typed by the SDK's generated paths (libs/sdk, from the OpenAPI document):
 * no hand-copied shapes. One client for the process; every call carries the session's JWT itself: a
 * short one the gateway mints with each lookup of the console session (GET /admin/v1/sessions/current),
 * so the console neither exchanges tokens nor renews a JWT of its own.
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
