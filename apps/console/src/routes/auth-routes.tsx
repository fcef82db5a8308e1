/** @jsxRuntime automatic @jsxImportSource preact */
import type Router from '@koa/router';
import { OPERATOR_CREDENTIAL_PREFIX, type SignInRequest } from '@payments/contracts';
import { GatewayError } from '../gateway/problem';
import type { ConsoleContext, ConsoleState } from '../http/context';
import { NotFoundError } from '../http/errors';
import { readForm, single } from '../http/form';
import { AdminRefusal, type SessionsApi } from '../session/sessions-api';
import type { SessionStore } from '../session/store';
import { formatsFor, localeOf } from '../views/locale';
import { LoginPage, type LoginForm } from '../views/login-page';
import type { MessageKey } from '../views/messages';
import { render } from '../views/render';

export interface AuthRouteDeps {
  /** Sign in and out on the gateway's admin API, where sessions live. */
  sessions: SessionsApi;
  /** The browser's cookie naming the session. */
  store: SessionStore;
  flash(ctx: ConsoleContext, kind: 'info' | 'error', text: string): void;
  /** Development: the integration-token and operator-credential sign-ins too (the gateway refuses them in production). */
  developmentSignIns: boolean;
}

/** Only console pages may be returned to after login (no open redirect). */
export function safeNext(next: string | undefined, role: 'tenant' | 'operator'): string {
  const home = role === 'tenant' ? '/tenant/charges' : '/operator';
  if (!next || !/^\/(tenant|operator)(\/[^\s\\]*)?(\?[^\s\\]*)?$/.test(next) || next.startsWith('//')) return home;
  return next.startsWith(`/${role}`) ? next : home;
}

const text = (ctx: ConsoleContext, key: MessageKey, vars?: Record<string, string | number>) =>
  formatsFor(localeOf(ctx)).t(key, vars);

const TOTP = /^[0-9]{6}$/;
/** /, /login (GET and the sign-in POSTs) and POST /logout. */
export function mountAuthRoutes(router: Router<ConsoleState>, deps: AuthRouteDeps): void {
  router.get('/', (ctx) => home(ctx));
  router.get('/login', (ctx) => loginPage(deps, ctx));
  router.post('/login', (ctx) => passwordSignIn(deps, ctx));
  router.post('/login/tenant', (ctx) => tenantSignIn(deps, ctx));
  router.post('/login/operator', (ctx) => operatorSignIn(deps, ctx));
  router.post('/logout', (ctx) => logout(deps, ctx));
}

/** GET /: to the home of the session's role, or to the login page. */
function home(ctx: ConsoleContext): void {
  const role = ctx.state.session?.role;
  ctx.redirect(role === 'tenant' ? '/tenant/charges' : role === 'operator' ? '/operator' : '/login');
}

/** GET /login: the form, or home when signed in. */
function loginPage(deps: AuthRouteDeps, ctx: ConsoleContext): void {
  if (ctx.state.session) return ctx.redirect('/');
  render(
    ctx,
    <LoginPage flash={ctx.state.flash} next={single(ctx.query.next)} developmentSignIns={deps.developmentSignIns} />,
  );
}

/** POST /login: e-mail, password and authenticator code. */
async function passwordSignIn(deps: AuthRouteDeps, ctx: ConsoleContext): Promise<void> {
  const form = await readForm(ctx);
  const email = single(form.get('email'))?.trim() ?? '';
  const password = single(form.get('password')) ?? '';
  const totp = single(form.get('totp'))?.trim() ?? '';
  const next = single(form.get('next'));
  const refuse = (field: string) => loginError(ctx, deps, 400, 'password', field, next, email);
  if (email === '') return refuse(text(ctx, 'login.missing', { field: text(ctx, 'login.email') }));
  if (password === '') return refuse(text(ctx, 'login.missing', { field: text(ctx, 'login.password') }));
  if (!TOTP.test(totp)) return refuse(text(ctx, 'login.badTotp'));
  await signIn(ctx, deps, 'password', { method: 'password', email, password, totp }, next, email);
}

/** POST /login/tenant: an integration token, in development only. */
async function tenantSignIn(deps: AuthRouteDeps, ctx: ConsoleContext): Promise<void> {
  if (!deps.developmentSignIns) throw new NotFoundError();
  const form = await readForm(ctx);
  const token = single(form.get('token'))?.trim() ?? '';
  const next = single(form.get('next'));
  if (token === '') return loginError(ctx, deps, 400, 'tenant', text(ctx, 'login.missing', { field: 'token' }), next);
  await signIn(ctx, deps, 'tenant', { method: 'integration_token', token }, next);
}

/** POST /login/operator: an operator credential, in development only. */
async function operatorSignIn(deps: AuthRouteDeps, ctx: ConsoleContext): Promise<void> {
  if (!deps.developmentSignIns) throw new NotFoundError();
  const form = await readForm(ctx);
  const credential = single(form.get('credential'))?.trim() ?? '';
  const next = single(form.get('next'));
  if (!credential.startsWith(OPERATOR_CREDENTIAL_PREFIX))
    return loginError(ctx, deps, 400, 'operator', `credential: ${text(ctx, 'login.badCredential')}`, next);
  await signIn(ctx, deps, 'operator', { method: 'operator_credential', credential }, next);
}

/**
 * POST /logout. Ends the session on the gateway first: a copy of the cookie then opens nothing. If the
 * gateway does not answer, the error page says so and the cookie stays, so the user can sign out again.
 */
async function logout(deps: AuthRouteDeps, ctx: ConsoleContext): Promise<void> {
  const sessionId = deps.store.sessionIdOf(ctx);
  if (sessionId !== undefined) {
    await deps.sessions.signOut(ctx, sessionId).catch((err: unknown) => {
      // 401: already ended (signed out elsewhere, expired, revoked): nothing left to end.
      if (!(err instanceof GatewayError && err.status === 401)) throw err;
    });
  }
  deps.store.clear(ctx);
  deps.flash(ctx, 'info', text(ctx, 'login.signedOut'));
  ctx.redirect('/login');
}

/**
 * Asks the gateway for a session and names it in the cookie. Its refusals (a wrong e-mail, password or
 * code; too many tries; a method off in production) are shown on the form; its failures are the error page.
 */
async function signIn(
  ctx: ConsoleContext,
  deps: AuthRouteDeps,
  form: LoginForm,
  request: SignInRequest,
  next: string | undefined,
  email?: string,
): Promise<void> {
  try {
    const session = await deps.sessions.signIn(ctx, request);
    deps.store.save(ctx, session);
    ctx.redirect(safeNext(next, session.role === 'operator' ? 'operator' : 'tenant'));
  } catch (err) {
    if (!(err instanceof GatewayError) || err.status >= 500 || err.status === 404) throw err;
    if (err.status === 429) {
      const seconds = err instanceof AdminRefusal ? err.retryAfterSeconds : undefined;
      if (seconds !== undefined) ctx.set('retry-after', String(seconds));
      return loginError(ctx, deps, 429, form, text(ctx, 'login.tooMany', { seconds: seconds ?? 60 }), next, email);
    }
    const detail = err.problem.detail ?? err.problem.title ?? String(err.status);
    return loginError(ctx, deps, err.status, form, text(ctx, 'login.refused', { detail }), next, email);
  }
}

function loginError(
  ctx: ConsoleContext,
  deps: AuthRouteDeps,
  status: number,
  form: LoginForm,
  text: string,
  next: string | undefined,
  email?: string,
): void {
  render(
    ctx,
    <LoginPage
      flash={ctx.state.flash}
      next={next}
      error={{ form, text }}
      email={email}
      developmentSignIns={deps.developmentSignIns}
    />,
    status,
  );
}
