/** @jsxRuntime automatic @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import type {
  DeliveryHealth,
  HostDeliveryHealth,
  RegistrationHealth,
  StatsWindow,
  TenantDeliveryHealth,
  WaitingBankAccount,
} from '@payments/contracts';
import { useFormats } from '../../views/locale';
import { WindowSwitch } from './dashboard';
import { OperatorFrame, type PageContext } from './frame';

type HealthFields = Omit<HostDeliveryHealth, 'host'>;

/**
 * The charges waiting for their bank per bank account (the longest waiting first), then delivery health
 * per tenant and per receiving host, worst first (as the gateway sorts them).
 */
export function HealthPage({
  page,
  window,
  health,
  registrations,
}: {
  page: PageContext;
  window: StatsWindow;
  health: DeliveryHealth;
  registrations: RegistrationHealth;
}) {
  const { t, dateTime: when } = useFormats();
  return (
    <OperatorFrame page={page} title={t('operator.health.title')}>
      <h2>{t('operator.health.waitingTitle')}</h2>
      <WaitingTable registrations={registrations} />
      <h2>{t('operator.health.deliveryTitle')}</h2>
      <WindowSwitch path="/operator/health" window={window} />
      <p class="muted">{t('operator.health.deliveryLead', { from: when(health.from), to: when(health.to) })}</p>
      <h2>{t('operator.health.perTenant')}</h2>
      <HealthTable
        kind="tenant"
        rows={health.tenants.map((t: TenantDeliveryHealth) => ({
          key: t.tenant_id,
          name: <a href={`/operator/tenants/${t.tenant_id}`}>{t.tenant_name}</a>,
          fields: t,
        }))}
      />
      <h2>{t('operator.health.perHost')}</h2>
      <HealthTable
        kind="host"
        rows={health.hosts.map((h) => ({ key: h.host, name: <span class="mono">{h.host}</span>, fields: h }))}
      />
    </OperatorFrame>
  );
}

function HealthTable({
  kind,
  rows,
}: {
  kind: 'tenant' | 'host';
  rows: ReadonlyArray<{ key: string; name: ComponentChildren; fields: HealthFields }>;
}) {
  const { t, duration, percent, dateTime: when } = useFormats();
  if (rows.length === 0) return <p class="muted empty">{t('operator.health.noDeliveries')}</p>;
  return (
    <table class={`health health-${kind}`}>
      <thead>
        <tr>
          <th>{t(kind === 'tenant' ? 'operator.health.tenant' : 'operator.health.host')}</th>
          <th class="num">{t('operator.health.success')}</th>
          <th class="num">{t('operator.health.delivered')}</th>
          <th class="num">{t('operator.health.failed')}</th>
          <th class="num">{t('operator.health.dead')}</th>
          <th class="num">{t('operator.health.pending')}</th>
          <th class="num">p99</th>
          <th>{t('operator.health.lastError')}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(({ key, name, fields: f }) => (
          <tr key={key} data-key={key} class={rateClass(f.success_rate)}>
            <td>{name}</td>
            <td class="num">{percent(f.success_rate)}</td>
            <td class="num">{f.delivered}</td>
            <td class="num">{f.failed}</td>
            <td class="num">{f.dead}</td>
            <td class="num">{f.pending}</td>
            <td class="num">{duration(f.p99_ms)}</td>
            <td>
              {f.last_error === null ? (
                '—'
              ) : (
                <>
                  <span class="error-text last-error">{f.last_error}</span>
                  <br />
                  <span class="muted">{when(f.last_failure_at)}</span>
                </>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Charges accepted and not yet taken by their bank, per bank account: a bank that does not answer (or
 * refuses our token, or has not issued them yet) leaves them pending and retried, never rejected.
 */
function WaitingTable({ registrations }: { registrations: RegistrationHealth }) {
  const { t, age, dateTime: when } = useFormats();
  const stuckAfter = age(registrations.stuck_after_seconds);
  if (registrations.accounts.length === 0)
    return <p class="muted empty waiting-none">{t('operator.health.noneWaiting', { at: when(registrations.at) })}</p>;
  return (
    <>
      <p class="muted">{t('operator.health.waitingLead', { at: when(registrations.at), stuckAfter })}</p>
      <table class="health health-waiting">
        <thead>
          <tr>
            <th>{t('operator.health.tenant')}</th>
            <th>{t('operator.health.bankAccount')}</th>
            <th class="num">{t('operator.health.waiting')}</th>
            <th class="num">{t('operator.health.stuck')}</th>
            <th class="num">{t('operator.health.oldest')}</th>
            <th class="num">{t('operator.health.attempts')}</th>
            <th>{t('operator.health.lastError')}</th>
          </tr>
        </thead>
        <tbody>
          {registrations.accounts.map((a) => (
            <WaitingRow key={`${a.tenant_id}/${a.account_key}`} account={a} />
          ))}
        </tbody>
      </table>
    </>
  );
}

function WaitingRow({ account: a }: { account: WaitingBankAccount }) {
  const { t, age, dateTime: when } = useFormats();
  return (
    <tr data-key={a.tenant_id} data-provider={a.provider} class={a.stuck > 0 ? 'health-bad' : undefined}>
      <td>
        <a href={`/operator/tenants/${a.tenant_id}`}>{a.tenant_name}</a>
      </td>
      <td>
        {a.provider}
        <br />
        <span class="muted mono">{a.base_url ?? t('operator.health.defaultApiRoot')}</span>
      </td>
      <td class="num waiting">{a.waiting}</td>
      <td class="num stuck">{a.stuck}</td>
      <td class="num oldest">
        {age(a.oldest_age_seconds)}
        <br />
        <span class="muted">{t('operator.health.since', { at: when(a.oldest_since) })}</span>
      </td>
      <td class="num attempts">{a.attempts}</td>
      <td>
        {a.last_error === null ? (
          '—'
        ) : (
          <>
            <span class="error-text last-error">{a.last_error}</span>
            <br />
            <span class="muted">{when(a.last_attempt_at)}</span>
          </>
        )}
      </td>
    </tr>
  );
}

/** A row's class by success rate: below 90% bad, below 99% a warning. */
export function rateClass(rate: number | null): string | undefined {
  if (rate === null) return undefined;
  return rate < 0.9 ? 'health-bad' : rate < 0.99 ? 'health-warn' : undefined;
}
