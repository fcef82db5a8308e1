import type { Kysely } from 'kysely';
import type { NoticeSource, ReceivablesDatabase } from '../db/schema';
import type { BankNotice, ProviderAccount } from './ports';

/**
 * Stores notices about charges of `account`'s bank account. A webhook's are stored as they come (the
 * bank may repeat one: applying it again changes nothing); reconciliation's once per charge and kind,
 * so sweeping the same window again adds nothing. Returns how many were stored.
 */
export async function storeNotices(
  db: Kysely<ReceivablesDatabase>,
  account: Pick<ProviderAccount, 'id' | 'tenantId' | 'accountKey'>,
  source: NoticeSource,
  notices: BankNotice[],
): Promise<number> {
  if (notices.length === 0) return 0;
  const deduplicated = source === 'list' || source === 'history';
  const rows = notices.map((n) => ({
    provider_account_id: account.id,
    tenant_id: account.tenantId,
    account_key: account.accountKey,
    charge_id: n.chargeId,
    kind: n.kind,
    situation: n.situation,
    situation_at: n.at,
    situation_at_precision: n.atPrecision,
    amount_received_cents: n.amountReceivedCents,
    payment_method: n.method,
    source,
    verified: n.verified,
    dedup_key: deduplicated && n.kind !== 'other' ? `${n.chargeId}:${n.kind}` : null,
  }));
  const inserted = await db
    .insertInto('bank_notices')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['tenant_id', 'account_key', 'dedup_key']).where('dedup_key', 'is not', null).doNothing(),
    )
    .returning('id')
    .execute();
  return inserted.length;
}
