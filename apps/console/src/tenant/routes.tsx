/** @jsxRuntime automatic @jsxImportSource preact */
import type Router from '@koa/router';
import type { ConsoleState } from '../http/context';
import type { TenantRouteDeps } from './mount';

/** The tenant's pages (prefix /tenant): charges, callbacks, booklets. */
export function mountTenantRoutes(router: Router<ConsoleState>, deps: TenantRouteDeps): void {
  void router;
  void deps;
}
