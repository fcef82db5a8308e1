/** @jsxRuntime automatic @jsxImportSource preact */
import type { DeliveryStats, RegistrationStats, StatsWindow } from '@payments/contracts';
import { LineChart, StackedBarChart } from '../../views/charts';
import type { AdminSchemas } from '../admin-client';
import { deliveriesChart, latencyChart, registrationsChart } from '../dashboard-charts';
import { OperatorFrame, type PageContext } from './frame';

export interface DashboardProps {
  page: PageContext;
  window: StatsWindow;
  /** Only this tenant's figures (?tenant_id=), else everyone's. */
  tenantId: string | undefined;
  deliveries: DeliveryStats;
  registrations: RegistrationStats;
  /** For the tenant filter. */
  tenants: ReadonlyArray<Pick<AdminSchemas['AdminTenant'], 'tenant_id' | 'name'>>;
}

/** Deliveries by outcome, delivery latency and registrations, over the last hour or day. */
export function DashboardPage({ page, window, tenantId, deliveries, registrations, tenants }: DashboardProps) {
  const total = <K extends string>(series: ReadonlyArray<Record<K, number | null>>, key: K) =>
    series.reduce((sum, b) => sum + (b[key] ?? 0), 0);
  return (
    <OperatorFrame page={page} title="Dashboard">
      <WindowSwitch path="/operator/dashboard" window={window} tenantId={tenantId} />
      <form method="get" action="/operator/dashboard" class="filters">
        <input type="hidden" name="window" value={window} />
        <label>
          Tenant
          <select name="tenant_id">
            <option value="" selected={!tenantId}>
              All tenants
            </option>
            {tenants.map((t) => (
              <option key={t.tenant_id} value={t.tenant_id} selected={t.tenant_id === tenantId}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="secondary">
          Show
        </button>
      </form>
      <dl class="facts totals">
        <dt>Delivery attempts</dt>
        <dd>
          {total(deliveries.series, 'delivered')} delivered, {total(deliveries.series, 'failed')} failed;{' '}
          {total(deliveries.series, 'dead')} events dead
        </dd>
        <dt>Registrations</dt>
        <dd>
          {total(registrations.series, 'registered')} registered, {total(registrations.series, 'failed')} refused
        </dd>
      </dl>
      <div class="charts">
        <StackedBarChart {...deliveriesChart(deliveries)} />
        <LineChart {...latencyChart(deliveries)} />
        <StackedBarChart {...registrationsChart(registrations)} />
      </div>
      <p class="muted">
        Times in Brasília time; the current {window === 'hour' ? 'minute' : 'quarter hour'} fills in as it goes (the
        figures are at most about 15 s old).
      </p>
    </OperatorFrame>
  );
}

/** Links between the hour and the day view of a page (no script: a link per window). */
export function WindowSwitch({ path, window, tenantId }: { path: string; window: StatsWindow; tenantId?: string }) {
  const href = (w: StatsWindow) =>
    `${path}?${new URLSearchParams({ window: w, ...(tenantId ? { tenant_id: tenantId } : {}) }).toString()}`;
  const link = (w: StatsWindow, label: string) =>
    w === window ? <strong aria-current="page">{label}</strong> : <a href={href(w)}>{label}</a>;
  return (
    <nav class="actions window-switch" aria-label="window">
      {link('hour', 'Last hour')}
      {link('day', 'Last day')}
    </nav>
  );
}
