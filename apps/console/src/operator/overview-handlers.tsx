/** @jsxRuntime automatic @jsxImportSource preact */
import { parseStatsQuery, type StatsQuery } from '@payments/contracts';
import type { ConsoleContext } from '../http/context';
import { BadInputError } from '../http/errors';
import { render } from '../views/render';
import { expectData } from './admin-client';
import type { OperatorKit } from './handler-kit';
import { DashboardPage } from './pages/dashboard';
import { HealthPage } from './pages/health';
import { panel } from './panel';

/** GET /dashboard: delivery and registration stats, each panel on its own. */
export async function dashboardPage({ api, page }: OperatorKit, ctx: ConsoleContext): Promise<void> {
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
}

/** GET /health: delivery and registration health. */
export async function healthPage({ api, page }: OperatorKit, ctx: ConsoleContext): Promise<void> {
  const { window } = statsQuery(ctx);
  const admin = api(ctx);
  const [health, registrations] = await Promise.all([
    expectData('delivery health', admin.GET('/admin/v1/delivery-health', { params: { query: { window } } })),
    expectData('registration health', admin.GET('/admin/v1/registration-health')),
  ]);
  render(ctx, <HealthPage page={page(ctx)} window={window} health={health} registrations={registrations} />);
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
