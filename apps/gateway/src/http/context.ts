import type { RouterContext } from '@koa/router';

/** What the middleware chain learns about a request as it goes. */
export interface GatewayState {
  requestId: string;
  /** Set by the access-token check. */
  tenantId?: string;
  tokenId?: string;
}

export type GatewayContext = RouterContext<GatewayState>;
