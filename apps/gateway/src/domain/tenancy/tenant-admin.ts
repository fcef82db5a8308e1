import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { loadCommonConfig, type RunMode } from '@payments/config';
import type { Keyring } from '@payments/credential-seal';
import type { GatewayDatabase } from '../../db/schema';
import { AdminError, AdminNotFoundError } from './admin-error';
import { endSessions } from '../../db/people/sessions-store';
import { CALLED_FROM_CODE, recordAdminAction, type AuditedBy } from './admin-audit';
import { generateIntegrationToken, generateSigningSecret, hashIntegrationToken, tokenHint } from './credentials';
import { insertDevelopmentAccount } from '../../db/provider-accounts';
import { loadCredentialsKeyring } from './provider-accounts';
import { sealSigningSecret } from './signing-secrets';
import { isUuid } from '@payments/contracts';

export { AdminError, AdminNotFoundError };

/** Operator actions on tenants and their integration tokens (used by the admin CLI). */
export interface NewTenant {
  tenant_id: string;
  name: string;
  integration_token: string;
  token_id: string;
  signing_secret: string;
}

export interface IssuedToken {
  tenant_id: string;
  token_id: string;
  integration_token: string;
}

export interface CreateTenantOptions {
  /**
   * development: the tenant gets a sandbox provider account at once, so it can issue charges;
   * production: none until an operator sets one. Default: NODE_ENV's mode.
   */
  mode?: RunMode;
  /** Seals the signing secret. Default: CREDENTIALS_ENCRYPTION_KEY (and CREDENTIALS_PREVIOUS_KEYS) of this process. */
  keyring?: Keyring;
  /** Who creates it, for the audit. */
  by?: AuditedBy;
}

export async function createTenant(
  db: Kysely<GatewayDatabase>,
  name: string,
  options: CreateTenantOptions = {},
): Promise<NewTenant> {
  const trimmed = name.trim();
  if (trimmed === '') throw new AdminError('a tenant needs a name');
  const processMode = loadCommonConfig().nodeEnv;
  const mode = options.mode ?? processMode;
  // This process's key, as its gateway reads it (what the tenant gets is `mode`, which a test may choose).
  const keyring = options.keyring ?? loadCredentialsKeyring(process.env, processMode);
  const tenantId = randomUUID();
  const signingSecret = generateSigningSecret();
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('tenants')
      .values({
        id: tenantId,
        name: trimmed,
        status: 'active',
        sealed_signing_secret: sealSigningSecret(keyring, tenantId, signingSecret),
        disabled_at: null,
      })
      .execute();
    if (mode === 'development') await insertDevelopmentAccount(trx, tenantId, trimmed);
    const token = await insertToken(trx, tenantId);
    await recordAdminAction(trx, options.by ?? CALLED_FROM_CODE, 'tenant.create', tenantId, {
      name: trimmed,
      token_id: token.token_id,
      provider_account: mode === 'development' ? 'sandbox' : 'none',
    });
    return {
      tenant_id: tenantId,
      name: trimmed,
      integration_token: token.integration_token,
      token_id: token.token_id,
      signing_secret: signingSecret,
    };
  });
}

export async function issueToken(
  db: Kysely<GatewayDatabase>,
  tenantId: string,
  by: AuditedBy = CALLED_FROM_CODE,
): Promise<IssuedToken> {
  if (!isUuid(tenantId)) throw new AdminError('--tenant must be a tenant id (a UUID)');
  return db.transaction().execute(async (trx) => {
    const tenant = await trx
      .selectFrom('tenants')
      .select(['id', 'status'])
      .where('id', '=', tenantId)
      .forUpdate()
      .executeTakeFirst();
    if (!tenant) throw new AdminNotFoundError(`no tenant ${tenantId}`);
    if (tenant.status !== 'active') throw new AdminError(`tenant ${tenantId} is disabled`);
    const token = await insertToken(trx, tenantId);
    await recordAdminAction(trx, by, 'token.create', tenantId, { token_id: token.token_id });
    return token;
  });
}

async function insertToken(db: Kysely<GatewayDatabase>, tenantId: string): Promise<IssuedToken> {
  const token = generateIntegrationToken();
  const tokenId = randomUUID();
  await db
    .insertInto('integration_tokens')
    .values({
      id: tokenId,
      tenant_id: tenantId,
      token_hash: hashIntegrationToken(token),
      token_hint: tokenHint(token),
      revoked_at: null,
      last_used_at: null,
    })
    .execute();
  return { tenant_id: tenantId, token_id: tokenId, integration_token: token };
}

/** Revokes a token given its id or the token itself; JWTs issued from it stop working at once. */
export async function revokeToken(
  db: Kysely<GatewayDatabase>,
  tokenIdOrToken: string,
  by: AuditedBy = CALLED_FROM_CODE,
): Promise<{ token_id: string; tenant_id: string }> {
  const byId = isUuid(tokenIdOrToken);
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('integration_tokens')
      .set({ revoked_at: new Date() })
      .where(byId ? 'id' : 'token_hash', '=', byId ? tokenIdOrToken : hashIntegrationToken(tokenIdOrToken))
      .where('revoked_at', 'is', null)
      .returning(['id', 'tenant_id'])
      .executeTakeFirst();
    if (!row) throw new AdminNotFoundError('no active token matches');
    // Console sessions signed in with it (development) end with it.
    await endSessions(trx, { tokenId: row.id }, 'token_revoked', new Date());
    // The token's id only: the audit never holds the token itself.
    await recordAdminAction(trx, by, 'token.revoke', row.tenant_id, { token_id: row.id });
    return { token_id: row.id, tenant_id: row.tenant_id };
  });
}

/** Disables a tenant: its tokens and JWTs are refused from now on; its data stays. */
export async function disableTenant(
  db: Kysely<GatewayDatabase>,
  tenantId: string,
  by: AuditedBy = CALLED_FROM_CODE,
): Promise<void> {
  if (!isUuid(tenantId)) throw new AdminNotFoundError(`no active tenant ${tenantId}`);
  await db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('tenants')
      .set({ status: 'disabled', disabled_at: new Date() })
      .where('id', '=', tenantId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) throw new AdminNotFoundError(`no active tenant ${tenantId}`);
    await endSessions(trx, { tenantId }, 'tenant_disabled', new Date());
    await recordAdminAction(trx, by, 'tenant.disable', tenantId);
  });
}

export async function listTenants(db: Kysely<GatewayDatabase>) {
  return db
    .selectFrom('tenants')
    .leftJoin('integration_tokens', (j) =>
      j.onRef('integration_tokens.tenant_id', '=', 'tenants.id').on('integration_tokens.revoked_at', 'is', null),
    )
    .select((eb) => [
      'tenants.id as tenant_id',
      'tenants.name',
      'tenants.status',
      'tenants.created_at',
      eb.fn.count<number>('integration_tokens.id').as('active_tokens'),
    ])
    .groupBy('tenants.id')
    .orderBy('tenants.created_at')
    .execute();
}

export async function listTokens(db: Kysely<GatewayDatabase>, tenantId: string) {
  return db
    .selectFrom('integration_tokens')
    .select(['id as token_id', 'token_hint', 'created_at', 'revoked_at', 'last_used_at'])
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .execute();
}
