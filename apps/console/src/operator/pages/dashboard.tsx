/** @jsxRuntime automatic @jsxImportSource preact */
import type { DeliveryStats, RegistrationStats, StatsWindow } from '@payments/contracts';
import { LineChart, StackedBarChart } from '../../views/charts';
import { deliveriesChart, latencyChart, registrationsChart } from '../dashboard-charts';
import { OperatorFrame, type PageContext } from './frame';

export interface DashboardProps {
  page: PageContext;
  window: StatsWindow;
  /** Only this tenant's figures (?tenant_id=), else everyone's. */
  tenantId: string | undefined;
  deliveries: DeliveryStats;
  registrations: RegistrationStats;
}

/** Deliveries by outcome, delivery latency and registrations, over the last hour or day. */
export function DashboardPage({ page, window, tenantId, deliveries, registrations }: DashboardProps) {
  return (
    <OperatorFrame page={page} title="Dashboard">
      <WindowSwitch path="/operator/dashboard" window={window} tenantId={tenantId} />
      {tenantId && (
        <p class="muted">
          Tenant <span class="mono">{tenantId}</span> only.{' '}
          <a href={`/operator/dashboard?window=${window}`}>All tenants</a>
        </p>
      )}
      <div class="charts">
        <StackedBarChart {...deliveriesChart(deliveries)} />
        <LineChart {...latencyChart(deliveries)} />
        <StackedBarChart {...registrationsChart(registrations)} />
      </div>
      <p class="muted">
        Times in UTC; the current {window === 'hour' ? 'minute' : 'quarter hour'} fills in as it goes (the figures are
        at most about 15 s old).
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
