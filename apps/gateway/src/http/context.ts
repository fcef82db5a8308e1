import type { RouterContext } from '@koa/router';

/** What the middleware chain learns about a request as it goes. */
export interface GatewayState {
  requestId: string;
  /** Set by the access-token check. */
  tenantId?: string;
  tokenId?: string;
  /** Set by the operator check of the admin port: the operator's name, as the audit records it. */
  operator?: string;
}

export type GatewayContext = RouterContext<GatewayState>;
