import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Beneficiary, ProviderAccountVersion, ProviderAccountView } from '@payments/contracts';
import { developmentBeneficiary, providerAccountKey } from '../domain/tenancy/provider-account-input';
import type { GatewayDatabase, ProviderAccountsTable } from './schema';

/*
 * The provider_accounts table: each tenant's versions of its provider account. Versions are immutable
 * rows; the current one is the row not superseded.
 */

/** Gives a new tenant the development sandbox account (inside createTenant's transaction). */
export async function insertDevelopmentAccount(
  db: Kysely<GatewayDatabase>,
  tenantId: string,
  tenantName: string,
): Promise<void> {
  await db
    .insertInto('provider_accounts')
    .values({
      id: randomUUID(),
      tenant_id: tenantId,
      provider: 'sandbox',
      account_key: providerAccountKey('sandbox', null, null),
      beneficiary: JSON.stringify(developmentBeneficiary(tenantName)),
      base_url: null,
      sealed_credentials: null,
    })
    .execute();
}

/**
 * Development start: every tenant without a current account gets the sandbox one (tenants created
 * before accounts existed). One statement; the partial unique index makes concurrent gateways harmless.
 * Returns how many tenants got one.
 */
export async function ensureDevelopmentAccounts(db: Kysely<GatewayDatabase>): Promise<number> {
  const template = JSON.stringify(developmentBeneficiary(''));
  const result = await sql`
    insert into provider_accounts (id, tenant_id, provider, account_key, beneficiary)
    select gen_random_uuid(), t.id, 'sandbox', ${providerAccountKey('sandbox', null, null)}, jsonb_set(${template}::jsonb, '{name}', to_jsonb(t.name))
    from tenants t
    where not exists (select 1 from provider_accounts p where p.tenant_id = t.id and p.superseded_at is null)
    on conflict (tenant_id) where superseded_at is null do nothing`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** The tenant's current account version (one indexed row), or undefined when it has none. */
export async function currentProviderAccount(
  db: Kysely<GatewayDatabase>,
  tenantId: string,
): Promise<ProviderAccountVersion | undefined> {
  const row = await currentRow(db, tenantId);
  return row && toVersion(row);
}

/** The tenant's current account row, as the CLI shows it, or undefined when it has none. */
export async function currentProviderAccountView(
  db: Kysely<GatewayDatabase>,
  tenantId: string,
): Promise<ProviderAccountView | undefined> {
  const row = await currentRow(db, tenantId);
  return row && toView(row);
}

/** The tenant's version in force: the one not superseded (at most one, by a unique index). */
function currentRow(db: Kysely<GatewayDatabase>, tenantId: string): Promise<Row | undefined> {
  return db
    .selectFrom('provider_accounts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('superseded_at', 'is', null)
    .executeTakeFirst();
}

/** Whether the tenant exists; `lock` locks its row until the transaction ends. */
export async function tenantExists(db: Kysely<GatewayDatabase>, tenantId: string, lock = false): Promise<boolean> {
  let query = db.selectFrom('tenants').select('id').where('id', '=', tenantId);
  if (lock) query = query.forUpdate();
  return (await query.executeTakeFirst()) !== undefined;
}

/** A version to insert: its id (the credentials are sealed bound to it) and its columns. */
export interface NewProviderAccountVersion {
  id: string;
  tenantId: string;
  provider: ProviderAccountsTable['provider'];
  accountKey: string;
  beneficiary: Beneficiary;
  baseUrl: string | null;
  sealedCredentials: string | null;
}

/** Supersedes the tenant's current version and inserts the new one (inside the caller's transaction). */
export async function supersedeProviderAccount(
  trx: Kysely<GatewayDatabase>,
  version: NewProviderAccountVersion,
): Promise<Row> {
  await trx
    .updateTable('provider_accounts')
    .set({ superseded_at: sql<Date>`now()` })
    .where('tenant_id', '=', version.tenantId)
    .where('superseded_at', 'is', null)
    .execute();
  return trx
    .insertInto('provider_accounts')
    .values({
      id: version.id,
      tenant_id: version.tenantId,
      provider: version.provider,
      account_key: version.accountKey,
      beneficiary: JSON.stringify(version.beneficiary),
      base_url: version.baseUrl,
      sealed_credentials: version.sealedCredentials,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The newest credentials sealed for one bank account of the tenant (the key of ProviderAccountVersion). */
export async function newestCredentials(
  db: Kysely<GatewayDatabase>,
  tenantId: string,
  accountKey: string,
): Promise<{ account_id: string; sealed_credentials: string | null } | undefined> {
  const row = await db
    .selectFrom('provider_accounts')
    .select(['id', 'sealed_credentials'])
    .where('tenant_id', '=', tenantId)
    .where('account_key', '=', accountKey)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row && { account_id: row.id, sealed_credentials: row.sealed_credentials };
}

/* Rows ------------------------------------------------------------------------------------------ */

export type ProviderAccountRow = Selectable<ProviderAccountsTable>;
type Row = ProviderAccountRow;

/** The columns a version is made of. */
export type ProviderAccountVersionRow = Pick<
  Row,
  'id' | 'tenant_id' | 'provider' | 'account_key' | 'beneficiary' | 'base_url' | 'sealed_credentials'
>;

/** The beneficiary in its documented field order (jsonb keeps its own). */
function beneficiaryOf(row: ProviderAccountVersionRow): Beneficiary {
  const b = row.beneficiary;
  return {
    name: b.name,
    tax_id: b.tax_id,
    city: b.city ?? null,
    pix_key: b.pix_key ?? null,
    agency: b.agency ?? null,
    account: b.account ?? null,
    address: b.address ?? null,
  };
}

export function toVersion(row: ProviderAccountVersionRow): ProviderAccountVersion {
  return {
    account_id: row.id,
    tenant_id: row.tenant_id,
    provider: row.provider,
    account_key: row.account_key,
    beneficiary: beneficiaryOf(row),
    base_url: row.base_url,
    sealed_credentials: row.sealed_credentials,
  };
}

export function toView(row: Row): ProviderAccountView {
  return {
    tenant_id: row.tenant_id,
    account_id: row.id,
    provider: row.provider,
    beneficiary: beneficiaryOf(row),
    base_url: row.base_url,
    credentials: row.sealed_credentials === null ? 'none' : 'set',
    created_at: row.created_at.toISOString(),
  };
}
