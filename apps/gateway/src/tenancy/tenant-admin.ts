import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { loadCommonConfig, type RunMode } from '@payments/config';
import type { GatewayDatabase } from '../db/schema';
import { AdminError } from './admin-error';
import { generateIntegrationToken, generateSigningSecret, hashIntegrationToken, tokenHint } from './credentials';
import { insertDevelopmentAccount } from './provider-accounts';

export { AdminError };

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
}

export async function createTenant(
  db: Kysely<GatewayDatabase>,
  name: string,
  options: CreateTenantOptions = {},
): Promise<NewTenant> {
  const trimmed = name.trim();
  if (trimmed === '') throw new AdminError('a tenant needs a name');
  const mode = options.mode ?? loadCommonConfig().nodeEnv;
  const tenantId = randomUUID();
  const signingSecret = generateSigningSecret();
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('tenants')
      .values({ id: tenantId, name: trimmed, status: 'active', signing_secret: signingSecret, disabled_at: null })
      .execute();
    if (mode === 'development') await insertDevelopmentAccount(trx, tenantId, trimmed);
    const token = await insertToken(trx, tenantId);
    return {
      tenant_id: tenantId,
      name: trimmed,
      integration_token: token.integration_token,
      token_id: token.token_id,
      signing_secret: signingSecret,
    };
  });
}

export async function issueToken(db: Kysely<GatewayDatabase>, tenantId: string): Promise<IssuedToken> {
  const tenant = await db.selectFrom('tenants').select(['id', 'status']).where('id', '=', tenantId).executeTakeFirst();
  if (!tenant) throw new AdminError(`no tenant ${tenantId}`);
  if (tenant.status !== 'active') throw new AdminError(`tenant ${tenantId} is disabled`);
  return insertToken(db, tenantId);
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
): Promise<{ token_id: string; tenant_id: string }> {
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tokenIdOrToken);
  const row = await db
    .updateTable('integration_tokens')
    .set({ revoked_at: new Date() })
    .where(isUuid ? 'id' : 'token_hash', '=', isUuid ? tokenIdOrToken : hashIntegrationToken(tokenIdOrToken))
    .where('revoked_at', 'is', null)
    .returning(['id', 'tenant_id'])
    .executeTakeFirst();
  if (!row) throw new AdminError('no active token matches');
  return { token_id: row.id, tenant_id: row.tenant_id };
}

/** Disables a tenant: its tokens and JWTs are refused from now on; its data stays. */
export async function disableTenant(db: Kysely<GatewayDatabase>, tenantId: string): Promise<void> {
  const result = await db
    .updateTable('tenants')
    .set({ status: 'disabled', disabled_at: new Date() })
    .where('id', '=', tenantId)
    .where('status', '=', 'active')
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw new AdminError(`no active tenant ${tenantId}`);
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
