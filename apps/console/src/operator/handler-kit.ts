import type { ConsoleContext } from '../http/context';
import type { OperatorRouteDeps } from '../routes/operator-mount';
import { operatorSession } from '../session/guards';
import type { AdminApi } from './admin-client';
import type { PageContext } from './pages/frame';

/** What every operator handler works with. */
export interface OperatorKit {
  /** The admin API as the operator of this request's session. */
  api(ctx: ConsoleContext): AdminApi;
  /** The frame every operator page takes. */
  page(ctx: ConsoleContext): PageContext;
  /** Shows a message on the next page (after a POST's redirect). */
  flash(ctx: ConsoleContext, kind: 'info' | 'error', text: string): void;
}

/** The kit of one mount of the operator routes. */
export function operatorKit(deps: OperatorRouteDeps): OperatorKit {
  const api = (ctx: ConsoleContext): AdminApi => deps.admin(ctx);
  const page = (ctx: ConsoleContext): PageContext => ({
    session: operatorSession(ctx),
    flash: ctx.state.flash,
    path: ctx.path,
  });
  return { api, page, flash: deps.flash };
}

/** The operator page of a tenant. */
export function tenantPath(tenantId: string): string {
  return `/operator/tenants/${encodeURIComponent(tenantId)}`;
}
