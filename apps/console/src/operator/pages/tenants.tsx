/** @jsxRuntime automatic @jsxImportSource preact */
import type { AdminSchemas } from '../admin-client';
import { useFormats } from '../../views/locale';
import { OperatorFrame, type PageContext } from './frame';

type Tenant = AdminSchemas['AdminTenant'];
type Token = AdminSchemas['AdminToken'];
type ProviderAccount = AdminSchemas['AdminProviderAccount'];

/** Every tenant (its name is the tenant's own text: shown escaped, as all text here), and a form to add one. */
export function TenantsPage({ page, tenants }: { page: PageContext; tenants: readonly Tenant[] }) {
  const { dateTime: when } = useFormats();
  return (
    <OperatorFrame page={page} title="Tenants">
      <form method="post" action="/operator/tenants" class="filters">
        <label>
          New tenant's name
          <input name="name" required maxLength={200} autocomplete="off" />
        </label>
        <button type="submit">Create tenant</button>
      </form>
      {tenants.length === 0 ? (
        <p class="muted">No tenants yet.</p>
      ) : (
        <table class="tenants">
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              <th class="num">Active tokens</th>
              <th>Created</th>
              <th>Id</th>
            </tr>
          </thead>
          <tbody>
            {tenants.map((t) => (
              <tr key={t.tenant_id} data-tenant-id={t.tenant_id}>
                <td>
                  <a href={`/operator/tenants/${t.tenant_id}`} class="tenant-name">
                    {t.name}
                  </a>
                </td>
                <td>
                  <span class={`badge ${t.status}`}>{t.status}</span>
                </td>
                <td class="num">{t.active_tokens}</td>
                <td>{when(t.created_at)}</td>
                <td class="mono">{t.tenant_id}</td>
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

/** One tenant: its tokens (issue, revoke), its provider account (show, set), its signing secret, disabling it. */
export function TenantPage({ page, tenant, tokens, account }: TenantPageProps) {
  const { dateTime: when } = useFormats();
  const base = `/operator/tenants/${tenant.tenant_id}`;
  const active = tenant.status === 'active';
  return (
    <OperatorFrame page={page} title={`Tenant ${tenant.name}`}>
      <dl class="facts">
        <dt>Name</dt>
        <dd class="tenant-name">{tenant.name}</dd>
        <dt>Id</dt>
        <dd class="mono">{tenant.tenant_id}</dd>
        <dt>Status</dt>
        <dd>
          <span class={`badge ${tenant.status}`}>{tenant.status}</span>
        </dd>
        <dt>Created</dt>
        <dd>{when(tenant.created_at)}</dd>
      </dl>
      <div class="actions">
        <a href={`/operator/audit?tenant_id=${tenant.tenant_id}`}>Audit of this tenant</a>
        <a href={`/operator/dashboard?tenant_id=${tenant.tenant_id}`}>Its charts</a>
      </div>

      <h2>Integration tokens</h2>
      <TokensTable tenantId={tenant.tenant_id} tokens={tokens} />
      {active && (
        <form method="post" action={`${base}/tokens`} class="actions">
          <button type="submit">Issue a token</button>
        </form>
      )}

      <h2>Webhook signing secret</h2>
      <form method="post" action={`${base}/rotate-secret`} class="filters">
        <label>
          The old secret still signs for (hours)
          <input name="overlap_hours" type="number" min="0" max="720" step="any" value="24" />
        </label>
        <button type="submit">Rotate the signing secret</button>
      </form>

      <h2>Provider account</h2>
      <ProviderAccountFacts account={account} />
      <ProviderAccountForm action={`${base}/provider-account`} account={account} />

      {active && (
        <>
          <h2>Disable</h2>
          <form method="post" action={`${base}/disable`} class="actions">
            <span class="muted">Every token and JWT of this tenant is refused from then on; its data stays.</span>
            <button type="submit" class="danger">
              Disable this tenant
            </button>
          </form>
        </>
      )}
    </OperatorFrame>
  );
}

function TokensTable({ tenantId, tokens }: { tenantId: string; tokens: readonly Token[] }) {
  const { dateTime: when } = useFormats();
  if (tokens.length === 0) return <p class="muted">No tokens.</p>;
  return (
    <table class="tokens">
      <thead>
        <tr>
          <th>Token</th>
          <th>Created</th>
          <th>Last used</th>
          <th>Revoked</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        {tokens.map((t) => (
          <tr key={t.token_id} data-token-id={t.token_id}>
            <td class="mono">{t.token_hint}…</td>
            <td>{when(t.created_at)}</td>
            <td>{when(t.last_used_at)}</td>
            <td>{t.revoked_at ? when(t.revoked_at) : <span class="badge active">active</span>}</td>
            <td>
              {!t.revoked_at && (
                <form method="post" action={`/operator/tokens/${t.token_id}/revoke`} class="inline">
                  <input type="hidden" name="tenant_id" value={tenantId} />
                  <button type="submit" class="secondary">
                    Revoke
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
  const { dateTime: when } = useFormats();
  if (!account) return <p class="muted">None set: the tenant's charges are refused until one is.</p>;
  const b = account.beneficiary;
  return (
    <dl class="facts provider-account">
      <dt>Provider</dt>
      <dd>
        {account.provider}
        {account.provider === 'pix' && <span class="muted"> (a bank's PIX API: PIX charges only)</span>}
      </dd>
      <dt>Beneficiary</dt>
      <dd>{b.name}</dd>
      <dt>Tax id</dt>
      <dd class="mono">{b.tax_id}</dd>
      <dt>City</dt>
      <dd>{b.city ?? '—'}</dd>
      <dt>PIX key</dt>
      <dd class="mono">
        {b.pix_key ?? '—'}
        {b.pix_key === null && account.provider === 'inter' && (
          <span class="muted"> (slips only: PIX charges get 422 pix_key_required)</span>
        )}
      </dd>
      <dt>Agency / account</dt>
      <dd class="mono">
        {b.agency ?? '—'} / {b.account ?? '—'}
      </dd>
      <dt>{account.provider === 'pix' ? 'PIX API root' : 'API root'}</dt>
      <dd class="mono">{account.base_url ?? '—'}</dd>
      <dt>Credentials</dt>
      <dd>{account.credentials === 'set' ? 'stored (never shown)' : 'none'}</dd>
      <dt>Since</dt>
      <dd>{when(account.created_at)}</dd>
    </dl>
  );
}

/** Sets the provider account (for charges accepted from then on); the inter credentials are write-only. */
function ProviderAccountForm({ action, account }: { action: string; account: ProviderAccount | undefined }) {
  const b = account?.beneficiary;
  const provider = account?.provider ?? 'sandbox';
  return (
    <details class="panel" open={!account}>
      <summary>{account ? 'Set another provider account' : 'Set the provider account'}</summary>
      <form method="post" action={action} class="stack">
        <label>
          Provider
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
          Beneficiary name
          <input name="beneficiary_name" required maxLength={200} value={b?.name ?? ''} />
        </label>
        <label>
          Tax id (CNPJ or CPF)
          <input name="beneficiary_tax_id" required maxLength={200} value={b?.tax_id ?? ''} />
        </label>
        <label>
          City
          <input name="beneficiary_city" maxLength={200} value={b?.city ?? ''} />
        </label>
        <label>
          PIX key
          <input name="beneficiary_pix_key" maxLength={77} value={b?.pix_key ?? ''} />
        </label>
        <label>
          Agency
          <input name="beneficiary_agency" maxLength={200} value={b?.agency ?? ''} />
        </label>
        <label>
          Account
          <input name="beneficiary_account" maxLength={200} value={b?.account ?? ''} />
        </label>
        <fieldset>
          <legend>inter only</legend>
          <label>
            API root
            <input name="base_url" maxLength={2000} value={account?.base_url ?? ''} />
          </label>
          <label>
            Client id
            <input name="client_id" maxLength={200} autocomplete="off" />
          </label>
          <label>
            Client secret
            <input name="client_secret" type="password" autocomplete="off" />
          </label>
          <label>
            Certificate (PEM)
            <textarea name="cert_pem" rows={3} />
          </label>
          <label>
            Private key (PEM)
            <textarea name="key_pem" rows={3} />
          </label>
        </fieldset>
        <button type="submit">Set the provider account</button>
      </form>
    </details>
  );
}

/**
 * A secret the gateway answers once (a new tenant's token and signing secret, an issued token, a
 * rotated secret): shown on this answer page only, never stored by the console nor put in a cookie.
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
  return (
    <OperatorFrame page={page} title={title}>
      <p class="flash info" role="status">
        {lead} Copy {secrets.length > 1 ? 'them' : 'it'} now: {secrets.length > 1 ? 'they are' : 'it is'} shown once and
        never again.
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
        <a href={`/operator/tenants/${tenantId}`}>Back to the tenant</a>
      </p>
    </OperatorFrame>
  );
}
