import { sql, type Kysely } from 'kysely';
import type { GatewayDatabase } from './schema';
import type { ProviderAccountVersion } from '@payments/contracts';
import { hashIntegrationToken } from '../domain/tenancy/credentials';
import { toVersion, type ProviderAccountVersionRow } from './provider-accounts';

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

/** What a request's access token stands for now: whether it is still good, and its tenant's account. */
export interface CredentialState {
  active: boolean;
  /** The tenant's current provider account, when the credential is active and the tenant has one. */
  account: ProviderAccountVersion | undefined;
}

type CredentialRow = { tenant_id: string; token_id: string } & {
  [K in keyof ProviderAccountVersionRow]: ProviderAccountVersionRow[K] | null;
};

/**
 * For each (tenant, token) pair, in one statement: whether it is still good (the JWT's integration
 * token not revoked, its tenant active), and the tenant's current provider account. Answers in the
 * order asked.
 */
export async function credentialStates(
  db: Kysely<GatewayDatabase>,
  credentials: readonly ActiveCredential[],
): Promise<CredentialState[]> {
  if (credentials.length === 0) return [];
  const { rows } = await sql<CredentialRow>`
    select t.tenant_id, t.id as token_id, pa.id, pa.provider, pa.account_key,
      pa.beneficiary, pa.base_url, pa.sealed_credentials
    from integration_tokens t join tenants on tenants.id = t.tenant_id
    join unnest(${credentials.map((c) => c.tenantId)}::uuid[], ${credentials.map((c) => c.tokenId)}::uuid[])
      as v(tenant_id, token_id) on t.id = v.token_id and t.tenant_id = v.tenant_id
    left join provider_accounts pa on pa.tenant_id = t.tenant_id and pa.superseded_at is null
    where t.revoked_at is null and tenants.status = 'active'`.execute(db);
  const states = new Map(rows.map((r) => [`${r.tenant_id} ${r.token_id}`, { active: true, account: accountOf(r) }]));
  return credentials.map(
    (c) =>
      states.get(`${c.tenantId.toLowerCase()} ${c.tokenId.toLowerCase()}`) ?? { active: false, account: undefined },
  );
}

function accountOf(row: CredentialRow): ProviderAccountVersion | undefined {
  const { id, provider, account_key, beneficiary } = row;
  if (id === null || provider === null || account_key === null || beneficiary === null) return undefined;
  return toVersion({
    id,
    tenant_id: row.tenant_id,
    provider,
    account_key,
    beneficiary,
    base_url: row.base_url,
    sealed_credentials: row.sealed_credentials,
  });
}

function activeTokens(db: Kysely<GatewayDatabase>) {
  return db
    .selectFrom('integration_tokens')
    .innerJoin('tenants', 'tenants.id', 'integration_tokens.tenant_id')
    .select(['tenants.id as tenantId', 'integration_tokens.id as tokenId'])
    .where('integration_tokens.revoked_at', 'is', null)
    .where('tenants.status', '=', 'active');
}
