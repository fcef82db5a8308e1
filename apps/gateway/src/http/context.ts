import type { RouterContext } from '@koa/router';
import type { ProviderAccountVersion } from '@payments/contracts';

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
