/** @jsxRuntime automatic @jsxImportSource preact */
import type Router from '@koa/router';
import { isUuid, parseStatsQuery, type StatsQuery } from '@payments/contracts';
import type { ConsoleContext, ConsoleState } from '../http/context';
import { BadInputError, NotFoundError } from '../http/errors';
import { readForm, single } from '../http/form';
import type { OperatorRouteDeps } from '../routes/operator-mount';
import { operatorSession } from '../session/guards';
import { brasiliaInstant, formatsFor, localeOf } from '../views/locale';
import { render } from '../views/render';
import { AdminApiError, expectData, type AdminApi, type AdminSchemas } from './admin-client';
import { AuditLogPage, type AuditFilterForm } from './pages/audit';
import { DashboardPage } from './pages/dashboard';
import { DeadLetterPage, DeadLettersPage } from './pages/dead-letters';
import type { PageContext } from './pages/frame';
import { HealthPage } from './pages/health';
import { TenantPage, TenantsPage } from './pages/tenants';
import { panel } from './panel';
import { mountTenantSecretRoutes } from './tenant-secret-routes';

/** Rows per page of the audit log, and dead letters per page. */
const AUDIT_PAGE = 50;
const DEAD_LETTERS_PAGE = 100;

/**
 * The operator's pages, on the router with prefix /operator behind requireRole('operator')
 * (routes/operator-mount.ts). Every call to the admin API carries the operator's own credential; a
 * refusal reaches the error handler as an AdminApiError (a GatewayError) and is shown as the
 * problem page, a 401 ending the session. Actions are POSTs answered by a redirect with a flash
 * message, except those answering a secret, which is shown once on the answer page itself (never in
 * a cookie).
 */
export function mountOperatorRoutes(router: Router<ConsoleState>, deps: OperatorRouteDeps): void {
  const api = (ctx: ConsoleContext): AdminApi => deps.admin(ctx);
  const page = (ctx: ConsoleContext): PageContext => ({
    session: operatorSession(ctx),
    flash: ctx.state.flash,
    path: ctx.path,
  });

  // The dashboard has a path of its own, so the navigation marks it alone (not every /operator page).
  router.get('/', (ctx) => ctx.redirect(`/operator/dashboard${ctx.querystring ? `?${ctx.querystring}` : ''}`));

  router.get('/dashboard', async (ctx) => {
    const query = statsQuery(ctx);
    const admin = api(ctx);
    const params = { params: { query: { window: query.window, tenant_id: query.tenant_id } } };
    // Each panel on its own: a service that does not answer blanks its panel, not the page.
    const [deliveries, registrations, tenants] = await Promise.all([
      panel(expectData('delivery stats', admin.GET('/admin/v1/stats/deliveries', params))),
      panel(expectData('registration stats', admin.GET('/admin/v1/stats/registrations', params))),
      panel(expectData('list tenants', admin.GET('/admin/v1/tenants')).then((list) => list.items)),
    ]);
    render(
      ctx,
      <DashboardPage
        page={page(ctx)}
        window={query.window}
        tenantId={query.tenant_id}
        deliveries={deliveries}
        registrations={registrations}
        tenants={tenants}
      />,
    );
  });

  router.get('/health', async (ctx) => {
    const { window } = statsQuery(ctx);
    const admin = api(ctx);
    const [health, registrations] = await Promise.all([
      expectData('delivery health', admin.GET('/admin/v1/delivery-health', { params: { query: { window } } })),
      expectData('registration health', admin.GET('/admin/v1/registration-health')),
    ]);
    render(ctx, <HealthPage page={page(ctx)} window={window} health={health} registrations={registrations} />);
  });

  router.get('/tenants', async (ctx) => {
    const { items } = await expectData('list tenants', api(ctx).GET('/admin/v1/tenants'));
    render(ctx, <TenantsPage page={page(ctx)} tenants={items} />);
  });

  // Create tenant, issue token, rotate secret: a confirmation page, then a POST carrying its Idempotency-Key.
  // Before /tenants/:tenant_id, so /tenants/new is not read as a tenant id.
  mountTenantSecretRoutes(router, { api, page, flash: deps.flash });

  router.get('/tenants/:tenant_id', async (ctx) => {
    const tenantId = ctx.params.tenant_id!;
    const admin = api(ctx);
    const { items } = await expectData('list tenants', admin.GET('/admin/v1/tenants'));
    const tenant = items.find((t) => t.tenant_id === tenantId.toLowerCase());
    if (!tenant) throw new NotFoundError('There is no tenant with this id.');
    const path = { params: { path: { tenant_id: tenant.tenant_id } } };
    const [tokens, account] = await Promise.all([
      expectData('list tokens', admin.GET('/admin/v1/tenants/{tenant_id}/tokens', path)),
      providerAccount(admin, tenant.tenant_id),
    ]);
    render(ctx, <TenantPage page={page(ctx)} tenant={tenant} tokens={tokens.items} account={account} />);
  });

  router.post('/tenants/:tenant_id/disable', async (ctx) => {
    const tenantId = ctx.params.tenant_id!;
    await expectData(
      'disable tenant',
      api(ctx).POST('/admin/v1/tenants/{tenant_id}/disable', { params: { path: { tenant_id: tenantId } } }),
    );
    deps.flash(ctx, 'info', formatsFor(localeOf(ctx)).t('operator.tenant.disabled'));
    ctx.redirect(tenantPath(tenantId));
  });

  router.post('/tokens/:token_id/revoke', async (ctx) => {
    const form = await readForm(ctx);
    const tenantId = single(form.get('tenant_id'));
    await expectData(
      'revoke token',
      api(ctx).POST('/admin/v1/tokens/{token_id}/revoke', { params: { path: { token_id: ctx.params.token_id! } } }),
    );
    deps.flash(ctx, 'info', formatsFor(localeOf(ctx)).t('operator.tokens.revokedFlash'));
    ctx.redirect(tenantId !== undefined && isUuid(tenantId) ? tenantPath(tenantId) : '/operator/tenants');
  });

  router.post('/tenants/:tenant_id/provider-account', async (ctx) => {
    const tenantId = ctx.params.tenant_id!;
    const body = providerAccountRequest(await readForm(ctx));
    const account = await expectData(
      'set provider account',
      api(ctx).PUT('/admin/v1/tenants/{tenant_id}/provider-account', {
        params: { path: { tenant_id: tenantId } },
        body,
      }),
    );
    deps.flash(ctx, 'info', formatsFor(localeOf(ctx)).t('operator.account.setFlash', { provider: account.provider }));
    ctx.redirect(tenantPath(tenantId));
  });

  router.get('/dead-letters', async (ctx) => {
    const cursor = single(ctx.query.cursor);
    const { items, next_cursor } = await expectData(
      'list dead letters',
      api(ctx).GET('/admin/v1/dead-letters', { params: { query: { cursor, limit: DEAD_LETTERS_PAGE } } }),
    );
    render(
      ctx,
      <DeadLettersPage page={page(ctx)} items={items} nextCursor={next_cursor ?? null} paged={cursor !== undefined} />,
    );
  });

  router.get('/dead-letters/:id', async (ctx) => {
    const id = deadLetterId(ctx.params.id);
    const detail = await expectData(
      'show dead letter',
      api(ctx).GET('/admin/v1/dead-letters/{dead_letter_id}', { params: { path: { dead_letter_id: id } } }),
    );
    render(ctx, <DeadLetterPage page={page(ctx)} detail={detail} />);
  });

  router.post('/dead-letters/:id/redrive', async (ctx) => {
    const id = deadLetterId(ctx.params.id);
    const result = await expectData(
      'redrive dead letter',
      api(ctx).POST('/admin/v1/dead-letters/{dead_letter_id}/redrive', { params: { path: { dead_letter_id: id } } }),
    );
    const { t } = formatsFor(localeOf(ctx));
    const vars = { id, stream: result.stream, msgId: result.msg_id };
    deps.flash(
      ctx,
      'info',
      t(result.duplicate ? 'operator.deadLetters.redrivenDuplicate' : 'operator.deadLetters.redriven', vars),
    );
    ctx.redirect('/operator/dead-letters');
  });

  // Discarding cannot be undone: the form's confirmation box must be ticked (checked here too, not
  // only by the browser's `required`).
  router.post('/dead-letters/:id/discard', async (ctx) => {
    const id = deadLetterId(ctx.params.id);
    const { t } = formatsFor(localeOf(ctx));
    if (single((await readForm(ctx)).get('confirm')) !== 'yes')
      throw new BadInputError('confirm', t('operator.deadLetters.mustConfirm'));
    await expectData(
      'discard dead letter',
      api(ctx).POST('/admin/v1/dead-letters/{dead_letter_id}/discard', { params: { path: { dead_letter_id: id } } }),
    );
    deps.flash(ctx, 'info', t('operator.deadLetters.discarded', { id }));
    ctx.redirect('/operator/dead-letters');
  });

  router.get('/audit', async (ctx) => {
    const filter = auditFilterForm(ctx);
    const cursor = single(ctx.query.cursor);
    const limit = pageSize(single(ctx.query.limit));
    const audit = await expectData(
      'audit log',
      api(ctx).GET('/admin/v1/audit', {
        params: {
          query: {
            tenant_id: filter.tenant_id,
            action: filter.action,
            operator: filter.operator,
            since: instantOf('since', filter.since),
            until: instantOf('until', filter.until),
            cursor,
            limit,
          },
        },
      }),
    );
    render(
      ctx,
      <AuditLogPage
        page={page(ctx)}
        audit={audit}
        filter={filter}
        limit={limit === AUDIT_PAGE ? undefined : limit}
        paged={cursor !== undefined}
      />,
    );
  });
}

/** :id of a dead letter, a positive integer. */
function deadLetterId(text: string | undefined): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id < 1) throw new BadInputError('id', 'a dead letter id is a positive integer');
  return id;
}

/** The audit page's filters as typed; empty fields are left out (the admin API checks the rest, naming the field). */
function auditFilterForm(ctx: ConsoleContext): AuditFilterForm {
  const field = (name: keyof AuditFilterForm) => {
    const value = single(ctx.query[name])?.trim();
    return value === undefined || value === '' ? {} : { [name]: value };
  };
  return { ...field('tenant_id'), ...field('action'), ...field('operator'), ...field('since'), ...field('until') };
}

/** A `datetime-local` value in Brasília time as the instant the admin API takes. */
function instantOf(name: 'since' | 'until', local: string | undefined): string | undefined {
  if (local === undefined) return undefined;
  const at = brasiliaInstant(local);
  if (at === undefined) throw new BadInputError(name, 'must be a date and time (dd/mm/aaaa hh:mm)');
  return at;
}

/** ?limit= of the audit page: rows per page, AUDIT_PAGE by default (the admin API checks the range). */
function pageSize(text: string | undefined): number {
  if (text === undefined) return AUDIT_PAGE;
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new BadInputError('limit', 'must be a whole number of rows');
  return n;
}

function tenantPath(tenantId: string): string {
  return `/operator/tenants/${encodeURIComponent(tenantId)}`;
}

/** ?window=hour|day[&tenant_id=] checked as the admin API checks it, each bad parameter named. */
function statsQuery(ctx: ConsoleContext): StatsQuery {
  const query = Object.fromEntries(Object.entries(ctx.query).filter(([, v]) => v !== '' && v !== undefined)) as Record<
    string,
    string | string[]
  >;
  const parsed = parseStatsQuery({ window: query.window, tenant_id: query.tenant_id });
  if (!parsed.ok) throw new BadInputError(parsed.errors[0]!.path, parsed.errors[0]!.message);
  return parsed.value;
}

/** The tenant's provider account, or undefined when it has none (the admin API answers 404). */
async function providerAccount(
  admin: AdminApi,
  tenantId: string,
): Promise<AdminSchemas['AdminProviderAccount'] | undefined> {
  try {
    return await expectData(
      'show provider account',
      admin.GET('/admin/v1/tenants/{tenant_id}/provider-account', { params: { path: { tenant_id: tenantId } } }),
    );
  } catch (err) {
    if (err instanceof AdminApiError && err.status === 404) return undefined;
    throw err;
  }
}

const CREDENTIAL_FIELDS = ['client_id', 'client_secret', 'cert_pem', 'key_pem'] as const;

/** The provider account form as the admin API takes it; empty optional fields are left out. */
export function providerAccountRequest(form: URLSearchParams): AdminSchemas['AdminProviderAccountRequest'] {
  const provider = single(form.get('provider'));
  if (provider !== 'sandbox' && provider !== 'inter') throw new BadInputError('provider', 'must be sandbox or inter');
  const optional = (name: string) => {
    const value = single(form.get(name));
    return value === undefined ? {} : { [name]: value };
  };
  const given = CREDENTIAL_FIELDS.filter((f) => single(form.get(f)) !== undefined);
  if (given.length > 0 && given.length < CREDENTIAL_FIELDS.length)
    throw new BadInputError(
      'credentials',
      'an inter account needs all four: client id, client secret, certificate and private key',
    );
  const beneficiary = {
    name: single(form.get('beneficiary_name')) ?? '',
    tax_id: single(form.get('beneficiary_tax_id')) ?? '',
    ...Object.fromEntries(
      ['city', 'pix_key', 'agency', 'account'].flatMap((f) => {
        const v = single(form.get(`beneficiary_${f}`));
        return v === undefined ? [] : [[f, v]];
      }),
    ),
  };
  return {
    provider,
    beneficiary,
    ...optional('base_url'),
    ...(given.length === CREDENTIAL_FIELDS.length
      ? {
          credentials: {
            client_id: single(form.get('client_id'))!,
            // Secrets as typed: PEM line breaks and surrounding spaces are the key's own.
            client_secret: form.get('client_secret') ?? '',
            cert_pem: form.get('cert_pem') ?? '',
            key_pem: form.get('key_pem') ?? '',
          },
        }
      : {}),
  };
}
