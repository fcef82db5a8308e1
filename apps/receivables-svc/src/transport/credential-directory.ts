import type { Bus } from '@payments/bus';
import { ServiceError, Subjects } from '@payments/contracts';
import type { NewestCredentials } from './providers/credentials';

/** The newest sealed credentials of a tenant's bank account, asked of the gateway (owner of accounts). */
export function busNewestCredentials(bus: Bus): NewestCredentials {
  return async (tenantId, accountKey) => {
    try {
      const reply = await bus.request(
        Subjects.tenants.providerCredentials,
        { tenant_id: tenantId, account_key: accountKey },
        { service: 'gateway' },
      );
      return { versionId: reply.account_id, sealed: reply.sealed_credentials };
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'not_found') return null;
      throw err;
    }
  };
}
