/** @jsxRuntime automatic @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import type { AdminSchemas } from '../admin-client';
import { useFormats } from '../../views/locale';
import { OperatorFrame, type PageContext } from './frame';

type Tenant = AdminSchemas['AdminTenant'];
type Token = AdminSchemas['AdminToken'];
type ProviderAccount = AdminSchemas['AdminProviderAccount'];

/** A tenant's status as the operator reads it (the badge's class stays the API's word). */
function StatusBadge({ status }: { status: Tenant['status'] }) {
  const { t } = useFormats();
  return (
    <span class={`badge ${status}`}>
      {t(status === 'active' ? 'operator.tenants.status.active' : 'operator.tenants.status.disabled')}
    </span>
  );
}

/**
 * Every tenant (its name is the tenant's own text: shown escaped, as all text here), and a form to add
 * one: it leads to the confirmation page, not to the action.
 */
export function TenantsPage({ page, tenants }: { page: PageContext; tenants: readonly Tenant[] }) {
  const { t, dateTime: when } = useFormats();
  return (
    <OperatorFrame page={page} title={t('operator.tenants.title')}>
      <form method="get" action="/operator/tenants/new" class="filters">
        <label>
          {t('operator.tenants.newName')}
          <input name="name" required maxLength={200} autocomplete="off" />
        </label>
        <button type="submit">{t('operator.tenants.create')}</button>
      </form>
      {tenants.length === 0 ? (
        <p class="muted">{t('operator.tenants.none')}</p>
      ) : (
        <table class="tenants">
          <thead>
            <tr>
              <th>{t('operator.tenants.name')}</th>
              <th>{t('operator.tenants.status')}</th>
              <th class="num">{t('operator.tenants.activeTokens')}</th>
              <th>{t('operator.tenants.created')}</th>
              <th>{t('operator.tenants.id')}</th>
            </tr>
          </thead>
          <tbody>
            {tenants.map((tenant) => (
              <tr key={tenant.tenant_id} data-tenant-id={tenant.tenant_id}>
                <td>
                  <a href={`/operator/tenants/${tenant.tenant_id}`} class="tenant-name">
                    {tenant.name}
                  </a>
                </td>
                <td>
                  <StatusBadge status={tenant.status} />
                </td>
                <td class="num">{tenant.active_tokens}</td>
                <td>{when(tenant.created_at)}</td>
                <td class="mono">{tenant.tenant_id}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </OperatorFrame>
  );
}

export interface TenantPageProps {
  page: PageContext;
  tenant: Tenant;
  tokens: readonly Token[];
  /** undefined: the tenant has none yet. */
  account: ProviderAccount | undefined;
}

/**
 * One tenant: its tokens (issue, revoke), its provider account (show, set), its signing secret (and
 * the overlap still running), disabling it. Issuing and rotating lead to a confirmation page first.
 */
export function TenantPage({ page, tenant, tokens, account }: TenantPageProps) {
  const { t, dateTime: when } = useFormats();
  const base = `/operator/tenants/${tenant.tenant_id}`;
  const active = tenant.status === 'active';
  return (
    <OperatorFrame page={page} title={t('operator.tenant.title', { name: tenant.name })}>
      <dl class="facts">
        <dt>{t('operator.tenants.name')}</dt>
        <dd class="tenant-name">{tenant.name}</dd>
        <dt>{t('operator.tenants.id')}</dt>
        <dd class="mono">{tenant.tenant_id}</dd>
        <dt>{t('operator.tenants.status')}</dt>
        <dd>
          <StatusBadge status={tenant.status} />
        </dd>
        <dt>{t('operator.tenants.created')}</dt>
        <dd>{when(tenant.created_at)}</dd>
      </dl>
      <div class="actions">
        <a href={`/operator/audit?tenant_id=${tenant.tenant_id}`}>{t('operator.tenant.audit')}</a>
        <a href={`/operator/dashboard?tenant_id=${tenant.tenant_id}`}>{t('operator.tenant.charts')}</a>
      </div>

      <h2>{t('operator.tenant.tokens')}</h2>
      <TokensTable tenantId={tenant.tenant_id} tokens={tokens} />
      {active && (
        <form method="get" action={`${base}/tokens/new`} class="actions">
          <button type="submit">{t('operator.tenant.issueToken')}</button>
        </form>
      )}

      <h2>{t('operator.tenant.signingSecret')}</h2>
      <OverlapNotice until={tenant.previous_secret_valid_until} />
      <form method="get" action={`${base}/rotate-secret`} class="filters">
        <label>
          {t('operator.tenant.overlapHours')}
          <input name="overlap_hours" type="number" min="0" max="720" step="any" value="24" />
        </label>
        <button type="submit">{t('operator.tenant.rotate')}</button>
      </form>

      <h2>{t('operator.tenant.providerAccount')}</h2>
      <ProviderAccountFacts account={account} />
      <ProviderAccountForm action={`${base}/provider-account`} account={account} />

      {active && (
        <>
          <h2>{t('operator.tenant.disable')}</h2>
          <form method="post" action={`${base}/disable`} class="actions">
            <span class="muted">{t('operator.tenant.disableLead')}</span>
            <button type="submit" class="danger">
              {t('operator.tenant.disableButton')}
            </button>
          </form>
        </>
      )}
    </OperatorFrame>
  );
}

/** While a rotation's overlap runs: until when the secret before it is still accepted. */
function OverlapNotice({ until }: { until: string | null }) {
  const { t, dateTime } = useFormats();
  if (until === null) return null;
  return (
    <p class="panel overlap" data-overlap-until={until}>
      {t('operator.secret.overlapRunning', { until: dateTime(until) })}
    </p>
  );
}

function TokensTable({ tenantId, tokens }: { tenantId: string; tokens: readonly Token[] }) {
  const { t, dateTime: when } = useFormats();
  if (tokens.length === 0) return <p class="muted">{t('operator.tokens.none')}</p>;
  return (
    <table class="tokens">
      <thead>
        <tr>
          <th>{t('operator.tokens.token')}</th>
          <th>{t('operator.tenants.created')}</th>
          <th>{t('operator.tokens.lastUsed')}</th>
          <th>{t('operator.tokens.revoked')}</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        {tokens.map((token) => (
          <tr key={token.token_id} data-token-id={token.token_id}>
            <td class="mono">{token.token_hint}…</td>
            <td>{when(token.created_at)}</td>
            <td>{when(token.last_used_at)}</td>
            <td>
              {token.revoked_at ? (
                when(token.revoked_at)
              ) : (
                <span class="badge active">{t('operator.tenants.status.active')}</span>
              )}
            </td>
            <td>
              {!token.revoked_at && (
                <form method="post" action={`/operator/tokens/${token.token_id}/revoke`} class="inline">
                  <input type="hidden" name="tenant_id" value={tenantId} />
                  <button type="submit" class="secondary">
                    {t('operator.tokens.revoke')}
                  </button>
                </form>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ProviderAccountFacts({ account }: { account: ProviderAccount | undefined }) {
  const { t, dateTime: when } = useFormats();
  if (!account) return <p class="muted">{t('operator.account.none')}</p>;
  const b = account.beneficiary;
  return (
    <dl class="facts provider-account">
      <dt>{t('operator.account.provider')}</dt>
      <dd>
        {account.provider}
        {account.provider === 'pix' && <span class="muted"> {t('operator.account.pixOnly')}</span>}
      </dd>
      <dt>{t('operator.account.beneficiary')}</dt>
      <dd>{b.name}</dd>
      <dt>{t('operator.account.taxId')}</dt>
      <dd class="mono">{b.tax_id}</dd>
      <dt>{t('operator.account.city')}</dt>
      <dd>{b.city ?? '—'}</dd>
      <dt>{t('operator.account.pixKey')}</dt>
      <dd class="mono">
        {b.pix_key ?? '—'}
        {b.pix_key === null && account.provider === 'inter' && (
          <span class="muted"> {t('operator.account.slipsOnly')}</span>
        )}
      </dd>
      <dt>{t('operator.account.agencyAccount')}</dt>
      <dd class="mono">
        {b.agency ?? '—'} / {b.account ?? '—'}
      </dd>
      <dt>{t(account.provider === 'pix' ? 'operator.account.pixApiRoot' : 'operator.account.apiRoot')}</dt>
      <dd class="mono">{account.base_url ?? '—'}</dd>
      <dt>{t('operator.account.credentials')}</dt>
      <dd>
        {t(account.credentials === 'set' ? 'operator.account.credentialsSet' : 'operator.account.credentialsNone')}
      </dd>
      <dt>{t('operator.account.since')}</dt>
      <dd>{when(account.created_at)}</dd>
    </dl>
  );
}

/** Sets the provider account (for charges accepted from then on); the inter credentials are write-only. */
function ProviderAccountForm({ action, account }: { action: string; account: ProviderAccount | undefined }) {
  const { t } = useFormats();
  const b = account?.beneficiary;
  const provider = account?.provider ?? 'sandbox';
  return (
    <details class="panel" open={!account}>
      <summary>{t(account ? 'operator.account.setAnother' : 'operator.account.set')}</summary>
      <form method="post" action={action} class="stack">
        <label>
          {t('operator.account.provider')}
          <select name="provider">
            <option value="sandbox" selected={provider === 'sandbox'}>
              sandbox
            </option>
            <option value="inter" selected={provider === 'inter'}>
              inter
            </option>
          </select>
        </label>
        <label>
          {t('operator.account.beneficiaryName')}
          <input name="beneficiary_name" required maxLength={200} value={b?.name ?? ''} />
        </label>
        <label>
          {t('operator.account.taxIdInput')}
          <input name="beneficiary_tax_id" required maxLength={200} value={b?.tax_id ?? ''} />
        </label>
        <label>
          {t('operator.account.city')}
          <input name="beneficiary_city" maxLength={200} value={b?.city ?? ''} />
        </label>
        <label>
          {t('operator.account.pixKey')}
          <input name="beneficiary_pix_key" maxLength={77} value={b?.pix_key ?? ''} />
        </label>
        <label>
          {t('operator.account.agency')}
          <input name="beneficiary_agency" maxLength={200} value={b?.agency ?? ''} />
        </label>
        <label>
          {t('operator.account.account')}
          <input name="beneficiary_account" maxLength={200} value={b?.account ?? ''} />
        </label>
        <fieldset>
          <legend>{t('operator.account.interOnly')}</legend>
          <label>
            {t('operator.account.apiRoot')}
            <input name="base_url" maxLength={2000} value={account?.base_url ?? ''} />
          </label>
          <label>
            {t('operator.account.clientId')}
            <input name="client_id" maxLength={200} autocomplete="off" />
          </label>
          <label>
            {t('operator.account.clientSecret')}
            <input name="client_secret" type="password" autocomplete="off" />
          </label>
          <label>
            {t('operator.account.certificate')}
            <textarea name="cert_pem" rows={3} />
          </label>
          <label>
            {t('operator.account.privateKey')}
            <textarea name="key_pem" rows={3} />
          </label>
        </fieldset>
        <button type="submit">{t('operator.account.set')}</button>
      </form>
    </details>
  );
}

/* Confirmation pages ------------------------------------------------------------------------------ */

/**
 * The form of a confirmation page: it carries the Idempotency-Key made when the page was rendered,
 * so submitting it twice (a double click, a reload of the answer) asks the admin API for the same
 * action twice with the same key, and the second answer is the first one's, secret included.
 */
function ConfirmForm({
  action,
  back,
  idempotencyKey,
  button,
  children,
}: {
  action: string;
  /** Where "cancel" leads: the page the action was asked from. */
  back: string;
  idempotencyKey: string;
  button: string;
  children?: ComponentChildren;
}) {
  const { t } = useFormats();
  return (
    <form method="post" action={action} class="stack confirm">
      <input type="hidden" name="idempotency_key" value={idempotencyKey} />
      {children}
      <div class="actions">
        <button type="submit">{button}</button>
        <a href={back}>{t('operator.confirm.cancel')}</a>
      </div>
    </form>
  );
}

/** What creating a tenant does, before it is done: its token and signing secret are shown once. */
export function ConfirmCreateTenantPage({
  page,
  name,
  idempotencyKey,
}: {
  page: PageContext;
  name: string;
  idempotencyKey: string;
}) {
  const { t } = useFormats();
  return (
    <OperatorFrame page={page} title={t('operator.confirm.create.title')}>
      <p>{t('operator.confirm.create.lead')}</p>
      <ConfirmForm
        action="/operator/tenants"
        back="/operator/tenants"
        idempotencyKey={idempotencyKey}
        button={t('operator.confirm.create.button')}
      >
        <label>
          {t('operator.tenants.newName')}
          <input name="name" required maxLength={200} autocomplete="off" value={name} />
        </label>
      </ConfirmForm>
    </OperatorFrame>
  );
}

/** What issuing a token does: one more token, shown once; the others keep working. */
export function ConfirmIssueTokenPage({
  page,
  tenant,
  idempotencyKey,
}: {
  page: PageContext;
  tenant: Tenant;
  idempotencyKey: string;
}) {
  const { t } = useFormats();
  return (
    <OperatorFrame page={page} title={t('operator.confirm.token.title')}>
      <p>{t('operator.confirm.token.lead', { name: tenant.name, count: tenant.active_tokens })}</p>
      <ConfirmForm
        action={`/operator/tenants/${tenant.tenant_id}/tokens`}
        back={`/operator/tenants/${tenant.tenant_id}`}
        idempotencyKey={idempotencyKey}
        button={t('operator.confirm.token.button')}
      />
    </OperatorFrame>
  );
}

/**
 * What rotating does: a new secret shown once, the current one still accepted for the overlap. While
 * the previous rotation's overlap still runs, the secret before it stops at once: the page says until
 * when it would have been accepted, and asks for an explicit confirmation (a required checkbox).
 */
export function ConfirmRotatePage({
  page,
  tenant,
  overlapHours,
  idempotencyKey,
}: {
  page: PageContext;
  tenant: Tenant;
  overlapHours: number;
  idempotencyKey: string;
}) {
  const { t, dateTime } = useFormats();
  const until = tenant.previous_secret_valid_until;
  return (
    <OperatorFrame page={page} title={t('operator.confirm.rotate.title')}>
      <p>{t('operator.confirm.rotate.lead', { name: tenant.name })}</p>
      <p>
        {overlapHours > 0
          ? t('operator.confirm.rotate.overlap', { hours: overlapHours })
          : t('operator.confirm.rotate.noOverlap')}
      </p>
      <ConfirmForm
        action={`/operator/tenants/${tenant.tenant_id}/rotate-secret`}
        back={`/operator/tenants/${tenant.tenant_id}`}
        idempotencyKey={idempotencyKey}
        button={t('operator.confirm.rotate.button')}
      >
        <input type="hidden" name="overlap_hours" value={String(overlapHours)} />
        {until !== null && (
          <>
            <p class="panel error-text overlap" role="alert" data-overlap-until={until}>
              {t('operator.confirm.rotate.overlapRunning', { until: dateTime(until) })}
            </p>
            <label class="check">
              <input type="checkbox" name="confirm_overlap" value="true" required />{' '}
              {t('operator.confirm.rotate.confirmOverlap', { until: dateTime(until) })}
            </label>
          </>
        )}
      </ConfirmForm>
    </OperatorFrame>
  );
}

/* Answers holding a secret ------------------------------------------------------------------------ */

/**
 * A secret the gateway answers once (a new tenant's token and signing secret, an issued token, a
 * rotated secret): shown on this answer page only, never stored by the console nor put in a cookie.
 * A second submission of the same confirmation shows the same secret (the admin API replays it).
 */
export function SecretOncePage({
  page,
  title,
  tenantId,
  lead,
  secrets,
}: {
  page: PageContext;
  title: string;
  tenantId: string;
  lead: string;
  secrets: ReadonlyArray<{ label: string; value: string; name: string }>;
}) {
  const { t } = useFormats();
  return (
    <OperatorFrame page={page} title={title}>
      <p class="flash info" role="status">
        {lead} {t(secrets.length > 1 ? 'operator.secret.copyThem' : 'operator.secret.copyIt')}
      </p>
      <dl class="facts secrets">
        {secrets.map((s) => (
          <>
            <dt>{s.label}</dt>
            <dd class="mono" data-secret={s.name}>
              {s.value}
            </dd>
          </>
        ))}
      </dl>
      <p>
        <a href={`/operator/tenants/${tenantId}`}>{t('operator.secret.back')}</a>
      </p>
    </OperatorFrame>
  );
}

export function TenantCreatedPage({ page, created }: { page: PageContext; created: AdminSchemas['AdminNewTenant'] }) {
  const { t } = useFormats();
  return (
    <SecretOncePage
      page={page}
      title={t('operator.secret.created.title', { name: created.name })}
      tenantId={created.tenant_id}
      lead={t('operator.secret.created.lead')}
      secrets={[
        { label: t('operator.secret.integrationToken'), value: created.integration_token, name: 'integration_token' },
        { label: t('operator.secret.signingSecret'), value: created.signing_secret, name: 'signing_secret' },
      ]}
    />
  );
}

export function TokenIssuedPage({ page, issued }: { page: PageContext; issued: AdminSchemas['AdminIssuedToken'] }) {
  const { t } = useFormats();
  return (
    <SecretOncePage
      page={page}
      title={t('operator.secret.issued.title')}
      tenantId={issued.tenant_id}
      lead={t('operator.secret.issued.lead')}
      secrets={[
        { label: t('operator.secret.integrationToken'), value: issued.integration_token, name: 'integration_token' },
      ]}
    />
  );
}

/** The rotated secret, and until when the previous one is still accepted. */
export function SecretRotatedPage({
  page,
  rotated,
}: {
  page: PageContext;
  rotated: AdminSchemas['AdminRotatedSecret'];
}) {
  const { t, dateTime } = useFormats();
  return (
    <SecretOncePage
      page={page}
      title={t('operator.secret.rotated.title')}
      tenantId={rotated.tenant_id}
      lead={t('operator.secret.rotated.lead', { until: dateTime(rotated.previous_valid_until) })}
      secrets={[{ label: t('operator.secret.signingSecret'), value: rotated.signing_secret, name: 'signing_secret' }]}
    />
  );
}
