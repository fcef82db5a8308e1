/** @jsxRuntime automatic @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import type { DeliveryHealth, HostDeliveryHealth, StatsWindow, TenantDeliveryHealth } from '@payments/contracts';
import { duration, percent, when } from '../format';
import { WindowSwitch } from './dashboard';
import { OperatorFrame, type PageContext } from './frame';

type HealthFields = Omit<HostDeliveryHealth, 'host'>;

/** Delivery health per tenant and per receiving host, worst first (as the gateway sorts them). */
export function HealthPage({
  page,
  window,
  health,
}: {
  page: PageContext;
  window: StatsWindow;
  health: DeliveryHealth;
}) {
  return (
    <OperatorFrame page={page} title="Delivery health">
      <WindowSwitch path="/operator/health" window={window} />
      <p class="muted">
        From {when(health.from)} to {when(health.to)}. Success rate = delivered / (delivered + failed) attempts; pending
        counts events waiting now. The last error is the receiver's own answer, shown as text.
      </p>
      <h2>Per tenant</h2>
      <HealthTable
        kind="tenant"
        rows={health.tenants.map((t: TenantDeliveryHealth) => ({
          key: t.tenant_id,
          name: <a href={`/operator/tenants/${t.tenant_id}`}>{t.tenant_name}</a>,
          fields: t,
        }))}
      />
      <h2>Per callback host</h2>
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
  if (rows.length === 0) return <p class="muted empty">No deliveries in this window.</p>;
  return (
    <table class={`health health-${kind}`}>
      <thead>
        <tr>
          <th>{kind === 'tenant' ? 'Tenant' : 'Host'}</th>
          <th class="num">Success</th>
          <th class="num">Delivered</th>
          <th class="num">Failed</th>
          <th class="num">Dead</th>
          <th class="num">Pending</th>
          <th class="num">p99</th>
          <th>Last error</th>
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

/** A row's class by success rate: below 90% bad, below 99% a warning. */
export function rateClass(rate: number | null): string | undefined {
  if (rate === null) return undefined;
  return rate < 0.9 ? 'health-bad' : rate < 0.99 ? 'health-warn' : undefined;
}
