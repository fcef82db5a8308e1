import type { Kysely } from 'kysely';
import type { GatewayDatabase } from '../db/schema';
import { hashIntegrationToken } from '../tenancy/credentials';

/** Lookups behind authentication: is this integration token (or the token a JWT came from) still good? */
export interface ActiveCredential {
  tenantId: string;
  tokenId: string;
}

export async function findActiveIntegrationToken(
  db: Kysely<GatewayDatabase>,
  token: string,
): Promise<ActiveCredential | undefined> {
  const row = await activeTokens(db)
    .where('integration_tokens.token_hash', '=', hashIntegrationToken(token))
    .executeTakeFirst();
  if (!row) return undefined;
  await db.updateTable('integration_tokens').set({ last_used_at: new Date() }).where('id', '=', row.tokenId).execute();
  return row;
}

export async function isCredentialActive(
  db: Kysely<GatewayDatabase>,
  tenantId: string,
  tokenId: string,
): Promise<boolean> {
  const row = await activeTokens(db)
    .where('integration_tokens.id', '=', tokenId)
    .where('tenants.id', '=', tenantId)
    .executeTakeFirst();
  return row !== undefined;
}

function activeTokens(db: Kysely<GatewayDatabase>) {
  return db
    .selectFrom('integration_tokens')
    .innerJoin('tenants', 'tenants.id', 'integration_tokens.tenant_id')
    .select(['tenants.id as tenantId', 'integration_tokens.id as tokenId'])
    .where('integration_tokens.revoked_at', 'is', null)
    .where('tenants.status', '=', 'active');
}
