import { type Kysely, type Migration } from 'kysely';
import { claimDueEventsPerTenantFunction } from './claim-due-events';

export const claimDueEventsPerTenant: Migration = {
  async up(db: Kysely<unknown>) {
    // A claim also keeps to each tenant's room (its share of the worker's hold), the way it keeps to
    // each host's: one tenant's old backlog, on any number of hosts, cannot fill the claims while
    // other tenants' due events wait. A new overload with three more parameters; the six-argument
    // function stays for instances of the previous version during a rolling upgrade.
    await claimDueEventsPerTenantFunction().execute(db);
  },
};
