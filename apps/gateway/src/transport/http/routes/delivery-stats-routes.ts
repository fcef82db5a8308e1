import type { Kysely } from 'kysely';
import type { Bus } from '@payments/bus';
import { parseStatsQuery, Subjects, type DeliveryHealth, type StatsQuery } from '@payments/contracts';
import type { GatewayDatabase } from '../../../db/schema';
import type { GatewayContext } from '../context';
import { validationError } from '../problem';

type Route = (method: 'GET', path: string, handle: (ctx: GatewayContext) => Promise<void>) => void;

/**
 * The admin API's delivery statistics: callback-svc answers from its per-minute
 * aggregates; the gateway adds the tenants' names from its own table. Mounted by mountAdminRoutes,
 * behind the operator credential.
 */
export function mountDeliveryStatsRoutes(
  route: Route,
  prefix: string,
  deps: { db: Kysely<GatewayDatabase>; bus: Bus },
  answer: (ctx: GatewayContext, status: number, body: unknown) => void,
): void {
  route('GET', `${prefix}/stats/deliveries`, async (ctx) => {
    answer(ctx, 200, await deps.bus.request(Subjects.callbacks.deliveryStats, statsQuery(ctx)));
  });

  route('GET', `${prefix}/delivery-health`, async (ctx) => {
    const { window } = statsQuery(ctx);
    const reply = await deps.bus.request(Subjects.callbacks.deliveryHealth, { window });
    const names = await tenantNames(
      deps.db,
      reply.tenants.map((t) => t.tenant_id),
    );
    const body: DeliveryHealth = {
      ...reply,
      // A tenant the gateway does not know (never expected: tenants are disabled, not deleted) shows its id.
      tenants: reply.tenants.map(({ tenant_id, ...rest }) => ({
        tenant_id,
        tenant_name: names.get(tenant_id) ?? tenant_id,
        ...rest,
      })),
    };
    answer(ctx, 200, body);
  });
}

function statsQuery(ctx: GatewayContext): StatsQuery {
  const query = parseStatsQuery(ctx.query);
  if (!query.ok) throw validationError(query.errors);
  return query.value;
}

async function tenantNames(db: Kysely<GatewayDatabase>, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('tenants').select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}
