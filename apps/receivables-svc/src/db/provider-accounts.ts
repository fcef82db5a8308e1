import type { Kysely, Selectable } from 'kysely';
import type { ProviderAccount, ProviderAccounts } from '../domain/ports';
import { LEGACY_SANDBOX_ACCOUNT } from '../transport/providers/legacy-account';
import type { ProviderAccountsTable, ReceivablesDatabase } from './schema';
import { isUuid } from '@payments/contracts';

/** How many account versions stay cached; far more than the tenants one instance serves at a time. */
const CACHE_LIMIT = 10_000;

/**
 * Provider account versions from this service's own table (written at intake). A version never
 * changes, so one read per version and instance is enough: it is kept in memory after that.
 */
export class PostgresProviderAccounts implements ProviderAccounts {
  private readonly cache = new Map<string, ProviderAccount>();

  constructor(private readonly db: Kysely<ReceivablesDatabase>) {}

  async forReceivable(accountId: string | null): Promise<ProviderAccount> {
    if (accountId === null) return LEGACY_SANDBOX_ACCOUNT;
    const account = await this.find(accountId);
    // The foreign key makes this unreachable short of a hand-edited database.
    if (!account) throw new Error(`provider account ${accountId} is referenced but not stored`);
    return account;
  }

  async find(accountId: string): Promise<ProviderAccount | null> {
    const id = accountId.toLowerCase();
    const cached = this.cache.get(id);
    if (cached) return cached;
    if (!isUuid(id)) return null;
    const row = await this.db.selectFrom('provider_accounts').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return null;
    const account = toAccount(row);
    if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(id, account);
    return account;
  }
}

function toAccount(row: Selectable<ProviderAccountsTable>): ProviderAccount {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    provider: row.provider,
    accountKey: row.account_key,
    beneficiary: row.beneficiary,
    baseUrl: row.base_url,
    sealedCredentials: row.sealed_credentials,
  };
}
