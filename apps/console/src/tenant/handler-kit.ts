import { bearer } from '../gateway/public-api';
import { gatewayFetch } from '../gateway/problem';
import type { ConsoleContext } from '../http/context';
import { tenantSession } from '../session/guards';
import { formatsFor, localeOf } from '../views/locale';
import type { MessageKey } from '../views/messages';
import type { TenantRouteDeps } from './mount';

/** Rows per page of the charges search and of the callbacks list. */
export const PAGE_SIZE = 50;
/** The Booklets page looks for booklet events among this many latest callbacks. */
export const BOOKLET_SCAN = 200;
/** The charge page lists at most this many of its callbacks (a charge has a handful). */
export const CHARGE_CALLBACKS = 100;

export const EVENT_ID = /^[A-Za-z0-9_-]{1,100}$/;

/** What every tenant handler works with: the routes' dependencies and the download client. */
export interface TenantKit {
  deps: TenantRouteDeps;
  /** Fetches files (booklets, slip files) from the gateway, with a longer deadline. */
  download: ReturnType<typeof gatewayFetch>;
}

/** The kit of one mount of the tenant routes. */
export function tenantKit(deps: TenantRouteDeps): TenantKit {
  // A booklet of a thousand installments takes the gateway a while to start sending.
  return { deps, download: gatewayFetch({ gatewayTimeoutMs: deps.gatewayTimeoutMs * 3 }) };
}

/** The gateway headers of the session's JWT. */
export const auth = (ctx: ConsoleContext) => bearer(tenantSession(ctx).jwt);

/** The props every tenant page takes. */
export const page = (ctx: ConsoleContext) => ({ session: tenantSession(ctx), flash: ctx.state.flash, path: ctx.path });

/** The request's text for a catalog key: flashes and errors are in the reader's language too. */
export const text = (ctx: ConsoleContext, key: MessageKey, vars?: Record<string, string | number>) =>
  formatsFor(localeOf(ctx)).t(key, vars);
