/** @jsxRuntime automatic @jsxImportSource preact */
import { isUuid } from '@payments/contracts';
import type { ConsoleContext } from '../http/context';
import { BadInputError, NotFoundError } from '../http/errors';
import { readForm, single } from '../http/form';
import { formatsFor, localeOf } from '../views/locale';
import { render } from '../views/render';
import { AdminApiError, expectData, type AdminApi, type AdminSchemas } from './admin-client';
import { tenantPath, type OperatorKit } from './handler-kit';
import { TenantPage, TenantsPage } from './pages/tenants';

/** GET /tenants: every tenant. */
export async function tenantsPage({ api, page }: OperatorKit, ctx: ConsoleContext): Promise<void> {
  const { items } = await expectData('list tenants', api(ctx).GET('/admin/v1/tenants'));
  render(ctx, <TenantsPage page={page(ctx)} tenants={items} />);
}

/** GET /tenants/:tenant_id: a tenant with its tokens and provider account. */
export async function tenantPage({ api, page }: OperatorKit, ctx: ConsoleContext): Promise<void> {
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
}

/** POST /tenants/:tenant_id/disable. */
export async function disableTenant({ api, flash }: OperatorKit, ctx: ConsoleContext): Promise<void> {
  const tenantId = ctx.params.tenant_id!;
  await expectData(
    'disable tenant',
    api(ctx).POST('/admin/v1/tenants/{tenant_id}/disable', { params: { path: { tenant_id: tenantId } } }),
  );
  flash(ctx, 'info', formatsFor(localeOf(ctx)).t('operator.tenant.disabled'));
  ctx.redirect(tenantPath(tenantId));
}

/** POST /tokens/:token_id/revoke: back to the token's tenant when the form names it. */
export async function revokeToken({ api, flash }: OperatorKit, ctx: ConsoleContext): Promise<void> {
  const form = await readForm(ctx);
  const tenantId = single(form.get('tenant_id'));
  await expectData(
    'revoke token',
    api(ctx).POST('/admin/v1/tokens/{token_id}/revoke', { params: { path: { token_id: ctx.params.token_id! } } }),
  );
  flash(ctx, 'info', formatsFor(localeOf(ctx)).t('operator.tokens.revokedFlash'));
  ctx.redirect(tenantId !== undefined && isUuid(tenantId) ? tenantPath(tenantId) : '/operator/tenants');
}

/** POST /tenants/:tenant_id/provider-account: sets the tenant's account at its payment provider. */
export async function setProviderAccount({ api, flash }: OperatorKit, ctx: ConsoleContext): Promise<void> {
  const tenantId = ctx.params.tenant_id!;
  const body = providerAccountRequest(await readForm(ctx));
  const account = await expectData(
    'set provider account',
    api(ctx).PUT('/admin/v1/tenants/{tenant_id}/provider-account', {
      params: { path: { tenant_id: tenantId } },
      body,
    }),
  );
  flash(ctx, 'info', formatsFor(localeOf(ctx)).t('operator.account.setFlash', { provider: account.provider }));
  ctx.redirect(tenantPath(tenantId));
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
