import type { Kysely } from 'kysely';
import type { NoticeSource, ReceivablesDatabase } from './schema';
import type { BankNotice, ProviderAccount } from '../domain/ports';

/**
 * Stores notices about charges of `account`'s bank account. A webhook's are stored as they come (the
 * bank may repeat one: applying it again changes nothing); reconciliation's once per charge and kind
 * (a refund: once per refund id), so sweeping the same window again adds nothing. A notice naming a
 * receivable (a PIX txid) that is not of this bank account is not stored at all: another system's charge
 * at the same bank would otherwise wait for ever as an unknown charge. Returns how many were stored.
 */
export async function storeNotices(
  db: Kysely<ReceivablesDatabase>,
  account: Pick<ProviderAccount, 'id' | 'tenantId' | 'accountKey'>,
  source: NoticeSource,
  notices: BankNotice[],
): Promise<number> {
  const ours = await withoutOtherReceivables(db, account, notices);
  if (ours.length === 0) return 0;
  const deduplicated = source === 'list' || source === 'history';
  const rows = ours.map((n) => ({
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
    refund_id: n.refund?.id ?? null,
    dedup_key: deduplicated ? dedupKey(n) : null,
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

/** One finding per charge and kind, and per refund: null for what is never applied ('other'). */
function dedupKey(n: BankNotice): string | null {
  if (n.kind === 'other') return null;
  if (n.kind === 'refunded') return n.refund ? `${n.chargeId}:refunded:${n.refund.id}` : null;
  return `${n.chargeId}:${n.kind}`;
}

/**
 * The notices that name no receivable, and those whose receivable is the tenant's under this bank
 * account (any version of it). A receivable exists before its charge is created at the bank, so a
 * notice left out here can never become ours later.
 */
async function withoutOtherReceivables(
  db: Kysely<ReceivablesDatabase>,
  account: Pick<ProviderAccount, 'tenantId' | 'accountKey'>,
  notices: BankNotice[],
): Promise<BankNotice[]> {
  const named = [...new Set(notices.flatMap((n) => (n.receivableId === undefined ? [] : [n.receivableId])))];
  if (named.length === 0) return notices;
  const known = new Set<string>();
  for (let i = 0; i < named.length; i += 1_000) {
    const rows = await db
      .selectFrom('receivables')
      .innerJoin('provider_accounts', 'provider_accounts.id', 'receivables.provider_account_id')
      .select('receivables.id')
      .where('receivables.id', 'in', named.slice(i, i + 1_000))
      .where('receivables.tenant_id', '=', account.tenantId)
      .where('provider_accounts.tenant_id', '=', account.tenantId)
      .where('provider_accounts.account_key', '=', account.accountKey)
      .execute();
    for (const row of rows) known.add(row.id.toLowerCase());
  }
  return notices.filter((n) => n.receivableId === undefined || known.has(n.receivableId.toLowerCase()));
}
