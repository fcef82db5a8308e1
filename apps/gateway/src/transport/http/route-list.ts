import type Router from '@koa/router';
import type { GatewayState } from './context';

/** One method and path the gateway answers, the path in the router's own syntax (`/clients/:uuid`). */
export interface ServedRoute {
  method: string;
  path: string;
}

/**
 * Every route mounted on the router, read from its stack, so that checks such as "the OpenAPI
 * document lists every route" compare against what is really served rather than a second list.
 * HEAD, which the router adds to every GET, is left out; so are middleware layers (no method).
 */
export function servedRoutes(router: Router<GatewayState>): ServedRoute[] {
  return router.stack.flatMap((layer) =>
    typeof layer.path === 'string'
      ? layer.methods.filter((method) => method !== 'HEAD').map((method) => ({ method, path: layer.path as string }))
      : [],
  );
}
