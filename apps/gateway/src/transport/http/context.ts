import type { RouterContext } from '@koa/router';
import { ServiceError, type ProviderAccountVersion } from '@payments/contracts';

/** What the middleware chain learns about a request as it goes. */
export interface GatewayState {
  requestId: string;
  /** Set by the access-token check. */
  tenantId?: string;
  tokenId?: string;
  /** Set by the access-token check too: the tenant's current provider account, when it has one. */
  providerAccount?: ProviderAccountVersion;
  /** Set by the operator check of the admin port: the operator's name, as the audit records it. */
  operator?: string;
}

export type GatewayContext = RouterContext<GatewayState>;

/** Who a request acts for, once the access-token check has passed: what every tenant endpoint is given. */
export interface AuthenticatedTenant {
  tenantId: string;
  tokenId: string;
}

/**
 * The tenant the access-token check named. Every tenant route runs behind that check, so a request
 * without one is a route mounted without it: refused as unauthenticated rather than run for no one.
 */
export function authenticatedTenant(ctx: GatewayContext): AuthenticatedTenant {
  const { tenantId, tokenId } = ctx.state;
  if (tenantId === undefined || tokenId === undefined)
    throw new ServiceError('unauthorized', 'this route needs an access token, and none was checked');
  return { tenantId, tokenId };
}
