import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { RunMode } from '@payments/config';
import { isUuid, type ProviderAccountView } from '@payments/contracts';
import { CredentialSealError, keyringFromEnv, seal, type Keyring } from '@payments/credential-seal';
import { currentProviderAccountView, supersedeProviderAccount, tenantExists, toView } from '../../db/provider-accounts';
import type { GatewayDatabase } from '../../db/schema';
import { AdminError, AdminNotFoundError } from './admin-error';
import { CALLED_FROM_CODE, recordAdminAction, type AuditedBy } from './admin-audit';
import {
  checkProviderAccountInput,
  ProviderAccountInputError,
  providerAccountKey,
  type ProviderAccountInput,
} from './provider-account-input';

/**
 * Each tenant's provider account: which provider registers its charges, with which
 * credentials, paying which beneficiary. Versions are immutable rows: setting an account supersedes
 * the current row and inserts a new one in one transaction, so a charge accepted earlier keeps the
 * version it was accepted under (receivables-svc gets the whole version with each create command).
 */

/** The current account as the CLI shows it; an unknown tenant or one without an account is an AdminError. */
export async function showProviderAccount(db: Kysely<GatewayDatabase>, tenantId: string): Promise<ProviderAccountView> {
  await requireTenant(db, tenantId);
  const view = await currentProviderAccountView(db, tenantId);
  if (!view)
    throw new AdminNotFoundError(
      `tenant ${tenantId} has no provider account: set one with npm run admin -- tenant account --tenant ${tenantId} --provider sandbox|inter|pix ...`,
    );
  return view;
}

/**
 * Sets the tenant's account: checks the input, supersedes the current version and inserts the new
 * one (credentials sealed, bound to its id). `credentialsKey` is needed only for `inter` and `pix`.
 */
export async function setProviderAccount(
  db: Kysely<GatewayDatabase>,
  credentialsKey: Buffer | Keyring | undefined,
  input: ProviderAccountInput,
  by: AuditedBy = CALLED_FROM_CODE,
): Promise<ProviderAccountView> {
  const account = checkProviderAccountInput(input);
  if (account.credentials && !credentialsKey)
    throw new AdminError(`CREDENTIALS_ENCRYPTION_KEY is needed to store ${account.provider} credentials`);
  const id = randomUUID();
  const sealed = account.credentials ? seal(credentialsKey!, JSON.stringify(account.credentials), id) : null;
  return db.transaction().execute(async (trx) => {
    // Locks the tenant: two operators setting it at once take turns instead of both superseding one row.
    await requireTenant(trx, input.tenantId, true);
    const row = await supersedeProviderAccount(trx, {
      id,
      tenantId: input.tenantId,
      provider: account.provider,
      accountKey: providerAccountKey(account.provider, account.baseUrl, account.credentials?.client_id ?? null),
      beneficiary: account.beneficiary,
      baseUrl: account.baseUrl,
      sealedCredentials: sealed,
    });
    // Settings only: the credentials are recorded as set or none, like the CLI shows them.
    await recordAdminAction(trx, by, 'tenant.account', input.tenantId, {
      account_id: row.id,
      provider: row.provider,
      beneficiary_name: account.beneficiary.name,
      beneficiary_tax_id: account.beneficiary.tax_id,
      base_url: row.base_url,
      pix_key: account.beneficiary.pix_key,
      // A pix account's token URL is a setting, not a secret, though it is sealed with the client.
      ...(account.credentials && 'token_url' in account.credentials
        ? { token_url: account.credentials.token_url }
        : {}),
      credentials: row.sealed_credentials === null ? 'none' : 'set',
    });
    return toView(row);
  });
}

/**
 * CREDENTIALS_ENCRYPTION_KEY (32 bytes, base64), which seals inter credentials. Development falls back
 * to the public DEV_CREDENTIALS_ENCRYPTION_KEY; production refuses a missing key and that default.
 */
export function loadCredentialsKey(env: Record<string, string | undefined>, mode: RunMode): Buffer {
  return loadCredentialsKeyring(env, mode).current.key;
}

/** The keyring of CREDENTIALS_ENCRYPTION_KEY and CREDENTIALS_PREVIOUS_KEYS; what is wrong with them is an AdminError. */
export function loadCredentialsKeyring(env: Record<string, string | undefined>, mode: RunMode): Keyring {
  try {
    return keyringFromEnv(env, mode);
  } catch (err) {
    if (err instanceof CredentialSealError) throw new AdminError(err.message);
    throw err;
  }
}

async function requireTenant(db: Kysely<GatewayDatabase>, tenantId: string, lock = false): Promise<void> {
  if (!isUuid(tenantId)) throw new ProviderAccountInputError('--tenant', `--tenant must be a tenant id (a UUID)`);
  if (!(await tenantExists(db, tenantId, lock))) throw new AdminNotFoundError(`no tenant ${tenantId}`);
}
