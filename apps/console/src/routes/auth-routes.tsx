/** @jsxRuntime automatic @jsxImportSource preact */
import type Router from '@koa/router';
import { GatewayError } from '../gateway/problem';
import { authenticate, type PublicApi } from '../gateway/public-api';
import type { ConsoleContext, ConsoleState } from '../http/context';
import { checkOperatorCredential, looksLikeOperatorCredential, type AdminApi } from '../operator/admin-client';
import { readForm, single } from '../http/form';
import type { SignInLimit } from '../http/sign-in-limit';
import { OPERATOR_IDLE_MS } from '../session/codec';
import type { SessionStore } from '../session/store';
import { LoginPage } from '../views/login-page';
import { render } from '../views/render';

export interface AuthRouteDeps {
  api: PublicApi;
  /** The admin API (GATEWAY_ADMIN_URL) as an operator: the credential is checked there at sign-in. */
  admin(credential: string): AdminApi;
  sessions: SessionStore;
  flash(ctx: ConsoleContext, kind: 'info' | 'error', text: string): void;
  /** Refused sign-ins per client address. */
  signIns: SignInLimit;
  now?: () => number;
}

/** Only console pages may be returned to after login (no open redirect). */
export function safeNext(next: string | undefined, role: 'tenant' | 'operator'): string {
  const home = role === 'tenant' ? '/tenant/charges' : '/operator';
  if (!next || !/^\/(tenant|operator)(\/[^\s\\]*)?(\?[^\s\\]*)?$/.test(next) || next.startsWith('//')) return home;
  return next.startsWith(`/${role}`) ? next : home;
}

/** /, /login (GET and the two POSTs) and POST /logout. */
export function mountAuthRoutes(router: Router<ConsoleState>, deps: AuthRouteDeps): void {
  const now = deps.now ?? Date.now;

  router.get('/', (ctx) => {
    const role = ctx.state.session?.role;
    ctx.redirect(role === 'tenant' ? '/tenant/charges' : role === 'operator' ? '/operator' : '/login');
  });

  router.get('/login', (ctx) => {
    if (ctx.state.session) return ctx.redirect('/');
    render(ctx, <LoginPage flash={ctx.state.flash} next={single(ctx.query.next)} />);
  });

  router.post('/login/tenant', async (ctx) => {
    await deps.signIns.check(ctx);
    const form = await readForm(ctx);
    const token = single(form.get('token'));
    const next = single(form.get('next'));
    if (!token) return loginError(ctx, 400, 'tenant', 'token: enter the integration token', next);
    try {
      const issued = await authenticate(deps.api, token);
      deps.sessions.save(ctx, { role: 'tenant', ...issued });
    } catch (err) {
      if (err instanceof GatewayError && err.status < 500) {
        await deps.signIns.refused(ctx);
        return loginError(ctx, err.status, 'tenant', err.problem.detail ?? 'the gateway refused this token', next);
      }
      throw err;
    }
    ctx.redirect(safeNext(next, 'tenant'));
  });

  router.post('/login/operator', async (ctx) => {
    await deps.signIns.check(ctx);
    const form = await readForm(ctx);
    const credential = single(form.get('credential'));
    const next = single(form.get('next'));
    if (!credential || !looksLikeOperatorCredential(credential)) {
      await deps.signIns.refused(ctx);
      return loginError(ctx, 400, 'operator', 'credential: an operator credential starts with opk_', next);
    }
    try {
      await checkOperatorCredential(deps.admin(credential));
    } catch (err) {
      if (err instanceof GatewayError && err.status < 500) {
        await deps.signIns.refused(ctx);
        return loginError(ctx, err.status, 'operator', err.problem.detail ?? 'the admin API refused it', next);
      }
      throw err;
    }
    const at = now();
    deps.sessions.save(ctx, { role: 'operator', credential, startedAt: at, expiresAt: at + OPERATOR_IDLE_MS });
    ctx.redirect(safeNext(next, 'operator'));
  });

  router.post('/logout', (ctx) => {
    deps.sessions.clear(ctx);
    deps.flash(ctx, 'info', 'You are logged out.');
    ctx.redirect('/login');
  });
}

function loginError(
  ctx: ConsoleContext,
  status: number,
  form: 'tenant' | 'operator',
  text: string,
  next: string | undefined,
): void {
  render(ctx, <LoginPage flash={ctx.state.flash} next={next} error={{ form, text }} />, status);
}
