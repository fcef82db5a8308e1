import { sql, type Kysely } from 'kysely';
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

/**
 * Which of these (tenant, token) pairs are still good, in one statement: the JWT's integration token
 * not revoked and its tenant active. Answers in the order asked.
 */
export async function activeCredentials(
  db: Kysely<GatewayDatabase>,
  credentials: readonly ActiveCredential[],
): Promise<boolean[]> {
  if (credentials.length === 0) return [];
  const { rows } = await sql<{ tenant_id: string; token_id: string }>`
    select t.tenant_id, t.id as token_id
    from integration_tokens t join tenants on tenants.id = t.tenant_id
    join unnest(${credentials.map((c) => c.tenantId)}::uuid[], ${credentials.map((c) => c.tokenId)}::uuid[])
      as v(tenant_id, token_id) on t.id = v.token_id and t.tenant_id = v.tenant_id
    where t.revoked_at is null and tenants.status = 'active'`.execute(db);
  const active = new Set(rows.map((r) => `${r.tenant_id} ${r.token_id}`));
  return credentials.map((c) => active.has(`${c.tenantId.toLowerCase()} ${c.tokenId.toLowerCase()}`));
}

function activeTokens(db: Kysely<GatewayDatabase>) {
  return db
    .selectFrom('integration_tokens')
    .innerJoin('tenants', 'tenants.id', 'integration_tokens.tenant_id')
    .select(['tenants.id as tenantId', 'integration_tokens.id as tokenId'])
    .where('integration_tokens.revoked_at', 'is', null)
    .where('tenants.status', '=', 'active');
}
