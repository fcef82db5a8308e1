/** @jsxRuntime automatic @jsxImportSource preact */
import type { DeliveryStats, RegistrationStats, StatsWindow } from '@payments/contracts';
import { LineChart, StackedBarChart } from '../../views/charts';
import { useFormats } from '../../views/locale';
import type { MessageKey } from '../../views/messages';
import type { AdminSchemas } from '../admin-client';
import { deliveriesChart, endToEndChart, receiverTimeChart, registrationsChart } from '../dashboard-charts';
import type { Panel } from '../panel';
import { OperatorFrame, type PageContext } from './frame';

export interface DashboardProps {
  page: PageContext;
  window: StatsWindow;
  /** Only this tenant's figures (?tenant_id=), else everyone's. */
  tenantId: string | undefined;
  /** callback-svc's figures, through the admin API: missing when it did not answer. */
  deliveries: Panel<DeliveryStats>;
  /** receivables-svc's figures: missing when it did not answer. */
  registrations: Panel<RegistrationStats>;
  /** For the tenant filter. */
  tenants: Panel<ReadonlyArray<Pick<AdminSchemas['AdminTenant'], 'tenant_id' | 'name'>>>;
}

/**
 * Deliveries by outcome, their end-to-end latency beside the receivers' answer time, and
 * registrations, over the last hour or day. Each panel stands alone: one service not answering
 * says so in its place, and the rest of the page is drawn.
 */
export function DashboardPage({ page, window, tenantId, deliveries, registrations, tenants }: DashboardProps) {
  const formats = useFormats();
  const { t } = formats;
  const total = <K extends string>(series: ReadonlyArray<Record<K, number | null>>, key: K) =>
    series.reduce((sum, b) => sum + (b[key] ?? 0), 0);
  return (
    <OperatorFrame page={page} title={t('operator.dashboard.title')}>
      <WindowSwitch path="/operator/dashboard" window={window} tenantId={tenantId} />
      <TenantFilter window={window} tenantId={tenantId} tenants={tenants} />
      <dl class="facts totals">
        <dt>{t('operator.dashboard.attempts')}</dt>
        <dd>
          {deliveries.ok
            ? t('operator.dashboard.attemptsTotals', {
                delivered: total(deliveries.value.series, 'delivered'),
                failed: total(deliveries.value.series, 'failed'),
                dead: total(deliveries.value.series, 'dead'),
              })
            : '—'}
        </dd>
        <dt>{t('operator.dashboard.registrations')}</dt>
        <dd>
          {registrations.ok
            ? t('operator.dashboard.registrationsTotals', {
                registered: total(registrations.value.series, 'registered'),
                failed: total(registrations.value.series, 'failed'),
              })
            : '—'}
        </dd>
      </dl>
      <div class="charts">
        {deliveries.ok ? (
          <>
            <StackedBarChart {...deliveriesChart(deliveries.value, formats)} />
            <LineChart {...endToEndChart(deliveries.value, formats)} />
            <LineChart {...receiverTimeChart(deliveries.value, formats)} />
          </>
        ) : (
          <Unavailable what="operator.dashboard.panel.deliveries" reason={deliveries.reason} id="deliveries" />
        )}
        {registrations.ok ? (
          <StackedBarChart {...registrationsChart(registrations.value, formats)} />
        ) : (
          <Unavailable what="operator.dashboard.panel.registrations" reason={registrations.reason} id="registrations" />
        )}
      </div>
      <p class="muted">{t('operator.dashboard.latencyNote')}</p>
      <p class="muted">{t(window === 'hour' ? 'operator.dashboard.note.hour' : 'operator.dashboard.note.day')}</p>
    </OperatorFrame>
  );
}

/** A panel whose service did not answer: said in its place, the reason as text. */
export function Unavailable({ what, reason, id }: { what: MessageKey; reason: string; id: string }) {
  const { t } = useFormats();
  return (
    <div class="panel unavailable" role="status" data-panel={id}>
      <p>{t('operator.dashboard.unavailable', { what: t(what) })}</p>
      <p class="muted">{reason}</p>
    </div>
  );
}

/** The tenant filter; without the tenant list it still offers everyone's and the tenant chosen (by id). */
function TenantFilter({ window, tenantId, tenants }: Pick<DashboardProps, 'window' | 'tenantId' | 'tenants'>) {
  const { t } = useFormats();
  const options = tenants.ok ? tenants.value : tenantId ? [{ tenant_id: tenantId, name: tenantId }] : [];
  return (
    <form method="get" action="/operator/dashboard" class="filters">
      <input type="hidden" name="window" value={window} />
      <label>
        {t('operator.dashboard.tenant')}
        <select name="tenant_id">
          <option value="" selected={!tenantId}>
            {t('operator.dashboard.allTenants')}
          </option>
          {options.map((o) => (
            <option key={o.tenant_id} value={o.tenant_id} selected={o.tenant_id === tenantId}>
              {o.name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" class="secondary">
        {t('operator.dashboard.show')}
      </button>
      {!tenants.ok && (
        <span class="muted" role="status" data-panel="tenants">
          {t('operator.dashboard.unavailable', { what: t('operator.dashboard.panel.tenants') })}
        </span>
      )}
    </form>
  );
}

/** Links between the hour and the day view of a page (no script: a link per window). */
export function WindowSwitch({ path, window, tenantId }: { path: string; window: StatsWindow; tenantId?: string }) {
  const { t } = useFormats();
  const href = (w: StatsWindow) =>
    `${path}?${new URLSearchParams({ window: w, ...(tenantId ? { tenant_id: tenantId } : {}) }).toString()}`;
  const link = (w: StatsWindow, label: string) =>
    w === window ? <strong aria-current="page">{label}</strong> : <a href={href(w)}>{label}</a>;
  return (
    <nav class="actions window-switch" aria-label="window">
      {link('hour', t('operator.dashboard.lastHour'))}
      {link('day', t('operator.dashboard.lastDay'))}
    </nav>
  );
}
