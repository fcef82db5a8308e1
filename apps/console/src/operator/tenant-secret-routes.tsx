/** @jsxRuntime automatic @jsxImportSource preact */
import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import { isUuid } from '@payments/contracts';
import type { ConsoleContext, ConsoleState } from '../http/context';
import { BadInputError, NotFoundError } from '../http/errors';
import { readForm, single } from '../http/form';
import { formatsFor, localeOf } from '../views/locale';
import { render } from '../views/render';
import { AdminApiError, expectData, type AdminApi, type AdminSchemas } from './admin-client';
import type { PageContext } from './pages/frame';
import {
  ConfirmCreateTenantPage,
  ConfirmIssueTokenPage,
  ConfirmRotatePage,
  SecretRotatedPage,
  TenantCreatedPage,
  TokenIssuedPage,
} from './pages/tenants';

/**
 * The three operator actions that answer a secret: create a tenant, issue a token, rotate the signing
 * secret. Each is a GET of a confirmation page saying what will happen, whose form carries an
 * Idempotency-Key made as the page is rendered, then the POST of that form, which sends the key to the
 * admin API. Submitting twice (a double click, a reload of the answer page) sends the same key, and
 * the admin API answers the first call's secret again without acting twice (docs/console.md).
 */
export interface TenantSecretRouteDeps {
  api(ctx: ConsoleContext): AdminApi;
  page(ctx: ConsoleContext): PageContext;
  flash(ctx: ConsoleContext, kind: 'info' | 'error', text: string): void;
}

/**
 * A second submission arriving while the first still runs (a double click: the browser shows the
 * second one's answer) waits for the first to finish, then shows its answer: up to this long.
 */
const IN_PROGRESS_WAIT_MS = 15_000;
const IN_PROGRESS_POLL_MS = 250;
export function mountTenantSecretRoutes(router: Router<ConsoleState>, deps: TenantSecretRouteDeps): void {
  router.get('/tenants/new', (ctx) => confirmCreateTenant(deps, ctx));
  router.post('/tenants', (ctx) => createTenant(deps, ctx));
  router.get('/tenants/:tenant_id/tokens/new', (ctx) => confirmIssueToken(deps, ctx));
  router.post('/tenants/:tenant_id/tokens', (ctx) => issueToken(deps, ctx));
  router.get('/tenants/:tenant_id/rotate-secret', (ctx) => confirmRotateSecret(deps, ctx));
  router.post('/tenants/:tenant_id/rotate-secret', (ctx) => rotateSecret(deps, ctx));
}

/** GET /tenants/new: the confirmation page of a new tenant. */
function confirmCreateTenant(deps: TenantSecretRouteDeps, ctx: ConsoleContext): void {
  const name = single(ctx.query.name) ?? '';
  render(ctx, <ConfirmCreateTenantPage page={deps.page(ctx)} name={name} idempotencyKey={randomUUID()} />);
}

/** POST /tenants: creates the tenant and shows its secret once. */
async function createTenant(deps: TenantSecretRouteDeps, ctx: ConsoleContext): Promise<void> {
  const form = await readForm(ctx);
  const key = idempotencyKey(ctx, form);
  const name = single(form.get('name'));
  if (name === undefined) throw new BadInputError('name', "the new tenant's name is missing");
  const created = await onceSettled(() =>
    expectData(
      'create tenant',
      deps.api(ctx).POST('/admin/v1/tenants', { params: { header: { 'Idempotency-Key': key } }, body: { name } }),
    ),
  );
  render(ctx, <TenantCreatedPage page={deps.page(ctx)} created={created} />, 201);
}

/** GET /tenants/:tenant_id/tokens/new: the confirmation page of a new integration token. */
async function confirmIssueToken(deps: TenantSecretRouteDeps, ctx: ConsoleContext): Promise<void> {
  const tenant = await tenantOf(deps.api(ctx), ctx.params.tenant_id);
  render(ctx, <ConfirmIssueTokenPage page={deps.page(ctx)} tenant={tenant} idempotencyKey={randomUUID()} />);
}

/** POST /tenants/:tenant_id/tokens: issues the token and shows it once. */
async function issueToken(deps: TenantSecretRouteDeps, ctx: ConsoleContext): Promise<void> {
  const tenantId = ctx.params.tenant_id ?? '';
  const key = idempotencyKey(ctx, await readForm(ctx));
  const issued = await onceSettled(() =>
    expectData(
      'issue token',
      deps.api(ctx).POST('/admin/v1/tenants/{tenant_id}/tokens', {
        params: { path: { tenant_id: tenantId }, header: { 'Idempotency-Key': key } },
      }),
    ),
  );
  render(ctx, <TokenIssuedPage page={deps.page(ctx)} issued={issued} />, 201);
}

/** GET /tenants/:tenant_id/rotate-secret: the confirmation page of a signing secret rotation. */
async function confirmRotateSecret(deps: TenantSecretRouteDeps, ctx: ConsoleContext): Promise<void> {
  const tenant = await tenantOf(deps.api(ctx), ctx.params.tenant_id);
  const hours = overlapHours(single(ctx.query.overlap_hours));
  render(
    ctx,
    <ConfirmRotatePage page={deps.page(ctx)} tenant={tenant} overlapHours={hours} idempotencyKey={randomUUID()} />,
  );
}

/** POST /tenants/:tenant_id/rotate-secret: rotates the signing secret and shows the new one once. */
async function rotateSecret(deps: TenantSecretRouteDeps, ctx: ConsoleContext): Promise<void> {
  const tenantId = ctx.params.tenant_id ?? '';
  const form = await readForm(ctx);
  const key = idempotencyKey(ctx, form);
  const hours = overlapHours(single(form.get('overlap_hours')));
  const confirmed = single(form.get('confirm_overlap')) === 'true';
  let rotated: AdminSchemas['AdminRotatedSecret'];
  try {
    rotated = await onceSettled(() =>
      expectData(
        'rotate signing secret',
        deps.api(ctx).POST('/admin/v1/tenants/{tenant_id}/signing-secret/rotate', {
          params: { path: { tenant_id: tenantId }, header: { 'Idempotency-Key': key } },
          body: { overlap_hours: hours, ...(confirmed ? { confirm_overlap: true } : {}) },
        }),
      ),
    );
  } catch (err) {
    // An overlap began after the confirmation page was rendered: show it again, now asking.
    if (err instanceof AdminApiError && err.problem.code === 'rotation_overlap_running') {
      deps.flash(ctx, 'error', formatsFor(localeOf(ctx)).t('operator.confirm.rotate.overlapStarted'));
      ctx.redirect(`/operator/tenants/${encodeURIComponent(tenantId)}/rotate-secret?overlap_hours=${hours}`);
      return;
    }
    throw err;
  }
  render(ctx, <SecretRotatedPage page={deps.page(ctx)} rotated={rotated} />);
}

/** The form's Idempotency-Key: a UUID, as the confirmation page made it. */
function idempotencyKey(ctx: ConsoleContext, form: URLSearchParams): string {
  const key = single(form.get('idempotency_key'));
  if (key === undefined || !isUuid(key))
    throw new BadInputError('idempotency_key', formatsFor(localeOf(ctx)).t('operator.confirm.missingKey'));
  return key;
}

/**
 * The admin call, asked again while the admin API says the same key is still running (409
 * idempotency_request_in_progress), until it answers what the first call got.
 */
async function onceSettled<T>(call: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + IN_PROGRESS_WAIT_MS;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      const running = err instanceof AdminApiError && err.problem.code === 'idempotency_request_in_progress';
      if (!running || Date.now() >= deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, IN_PROGRESS_POLL_MS));
    }
  }
}

async function tenantOf(admin: AdminApi, tenantId: string | undefined): Promise<AdminSchemas['AdminTenant']> {
  const { items } = await expectData('list tenants', admin.GET('/admin/v1/tenants'));
  const tenant = items.find((t) => t.tenant_id === (tenantId ?? '').toLowerCase());
  if (!tenant) throw new NotFoundError('There is no tenant with this id.');
  return tenant;
}

/** overlap_hours: a number of hours, 24 when not given (the admin API checks the range). */
function overlapHours(text: string | undefined): number {
  if (text === undefined) return 24;
  const hours = Number(text);
  if (!Number.isFinite(hours)) throw new BadInputError('overlap_hours', 'must be a number of hours (0 to 720)');
  return hours;
}
