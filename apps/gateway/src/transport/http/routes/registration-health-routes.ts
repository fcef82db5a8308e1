import type { Kysely } from 'kysely';
import type { Bus } from '@payments/bus';
import { Subjects, type RegistrationHealth } from '@payments/contracts';
import type { GatewayDatabase } from '../../../db/schema';
import type { GatewayContext } from '../context';

type Route = (method: 'GET', path: string, handle: (ctx: GatewayContext) => Promise<void>) => void;

/**
 * The admin API's registration health: receivables-svc answers with the charges waiting
 * for their bank per bank account; the gateway adds the tenants' names from its own table. Mounted by
 * mountAdminRoutes, behind the operator credential.
 */
export function mountRegistrationHealthRoutes(
  route: Route,
  prefix: string,
  deps: { db: Kysely<GatewayDatabase>; bus: Bus },
  answer: (ctx: GatewayContext, status: number, body: unknown) => void,
): void {
  route('GET', `${prefix}/registration-health`, async (ctx) => {
    const reply = await deps.bus.request(Subjects.receivables.registrationHealth, {});
    const ids = [...new Set(reply.accounts.map((a) => a.tenant_id))];
    const rows =
      ids.length === 0
        ? []
        : await deps.db.selectFrom('tenants').select(['id', 'name']).where('id', 'in', ids).execute();
    const names = new Map(rows.map((r) => [r.id, r.name]));
    const body: RegistrationHealth = {
      ...reply,
      // A tenant the gateway does not know (never expected: tenants are disabled, not deleted) shows its id.
      accounts: reply.accounts.map(({ tenant_id, ...rest }) => ({
        tenant_id,
        tenant_name: names.get(tenant_id) ?? tenant_id,
        ...rest,
      })),
    };
    answer(ctx, 200, body);
  });
}
