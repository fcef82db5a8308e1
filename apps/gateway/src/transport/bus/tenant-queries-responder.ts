import type { Kysely } from 'kysely';
import type { RegisterHandlers } from '@payments/bus';
import { QueueGroups, ServiceError, Subjects } from '@payments/contracts';
import type { Keyring } from '@payments/credential-seal';
import type { GatewayDatabase } from '../../db/schema';
import { newestCredentials } from '../../db/provider-accounts';
import { signingSecretsOf } from '../../domain/tenancy/signing-secrets';

/**
 * The gateway owns tenants: it tells callback-svc the secret that signs a tenant's callbacks, and
 * booklet-svc the tenant's name (the payee printed on a booklet), and receivables-svc the newest
 * (sealed) credentials of a tenant's bank account. The services' registerHandlers shape.
 */
export const serveTenantQueries: RegisterHandlers<{ db: Kysely<GatewayDatabase>; keyring: Keyring }> = (
  bus,
  { db, keyring },
) => [
  bus.serve(
    Subjects.tenants.signingSecret,
    async ({ tenant_id }) => {
      // Read at every request (callback-svc reuses a reply for at most max_age_ms): a rotation is seen at once.
      const secrets = await signingSecretsOf(db, keyring, tenant_id);
      if (!secrets) throw new ServiceError('not_found', `no tenant ${tenant_id}`);
      return secrets;
    },
    { queue: QueueGroups.gateway },
  ),
  bus.serve(
    Subjects.tenants.profile,
    async ({ tenant_id }) => {
      const row = await db.selectFrom('tenants').select('name').where('id', '=', tenant_id).executeTakeFirst();
      if (!row) throw new ServiceError('not_found', `no tenant ${tenant_id}`);
      return { name: row.name };
    },
    { queue: QueueGroups.gateway },
  ),
  bus.serve(
    Subjects.tenants.providerCredentials,
    async ({ tenant_id, account_key }) => {
      const newest = await newestCredentials(db, tenant_id, account_key);
      if (!newest) throw new ServiceError('not_found', `no provider account ${account_key} for tenant ${tenant_id}`);
      return newest;
    },
    { queue: QueueGroups.gateway },
  ),
];
