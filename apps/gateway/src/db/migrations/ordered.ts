import type { Keyring } from '@payments/credential-seal';
import type { Migration } from 'kysely';
import { tenantsAndTokens } from './0001_tenants_and_tokens';
import { idempotencyKeys } from './0002_idempotency_keys';
import { providerAccounts } from './0003_provider_accounts';
import { sealedSigningSecrets } from './0004_sealed_signing_secrets';
import { adminAudit } from './0005_admin_audit';
import { rateLimitBuckets } from './0006_rate_limit_buckets';
import { operators } from './0007_operators';
import { admitRequests } from './0008_admit_requests';
import { pixProviderAccounts } from './0009_pix_provider_accounts';
import { idempotencyLockToken } from './0010_idempotency_lock_token';
import { admitRequestsLockTokens } from './0011_admit_requests_lock_tokens';
import { hotTablesAutovacuum } from './0012_hot_tables_autovacuum';
import { consolePeople } from './0013_console_people';
import { adminAuditOrigin } from './0014_admin_audit_origin';

/**
 * The gateway's migrations. Sealing the signing secrets stored in clear (0004) needs the keyring of the
 * gateway's configuration; without one, that migration refuses a database that has any to seal (a
 * fresh database, as tests make, has none).
 */
export function gatewayMigrations(keyring?: Keyring): Record<string, Migration> {
  return {
    '0001_tenants_and_tokens': tenantsAndTokens,
    '0002_idempotency_keys': idempotencyKeys,
    '0003_provider_accounts': providerAccounts,
    '0004_sealed_signing_secrets': sealedSigningSecrets(keyring),
    '0005_admin_audit': adminAudit,
    '0006_rate_limit_buckets': rateLimitBuckets,
    '0007_operators': operators,
    '0008_admit_requests': admitRequests,
    '0009_pix_provider_accounts': pixProviderAccounts,
    '0010_idempotency_lock_token': idempotencyLockToken,
    '0011_admit_requests_lock_tokens': admitRequestsLockTokens,
    '0012_hot_tables_autovacuum': hotTablesAutovacuum,
    '0013_console_people': consolePeople,
    '0014_admin_audit_origin': adminAuditOrigin,
  };
}

/** Without a keyring: enough for a fresh database (tests), and for the names of the migrations. */
export const migrations: Record<string, Migration> = gatewayMigrations();
