import type { Kysely } from 'kysely';
import { isUuid, type ReceivableHistory, ServiceError } from '@payments/contracts';
import type { ReceivablesDatabase } from '../db/schema';

const CLOCK_SLACK_MS = 3_600_000;

/**
 * A tenant's receivable's state changes, oldest first (GET /api/v1/accounts-receivable/{uuid}/history),
 * by the ERP's id in any spelling. The first entry is its receipt (null -> pending, at created_at):
 * intake writes no history row for it, the receivable row holds it. Another tenant's id is not found.
 */
export async function receivableHistory(
  db: Kysely<ReceivablesDatabase>,
  tenantId: string,
  accountReceivableId: string,
): Promise<ReceivableHistory> {
  const receivable = isUuid(accountReceivableId)
    ? await db
        .selectFrom('receivables')
        .select(['id', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('account_receivable_id', '=', accountReceivableId)
        .executeTakeFirst()
    : undefined;
  if (!receivable) throw new ServiceError('not_found', `no receivable ${accountReceivableId}`);
  const rows = await historyQuery(db, receivable).execute();
  return {
    items: [
      { at: receivable.created_at.toISOString(), from_state: null, to_state: 'pending', reason: 'received' },
      ...rows.map((r) => ({
        at: r.at.toISOString(),
        from_state: r.from_state,
        to_state: r.to_state,
        reason: r.reason,
      })),
    ],
  };
}

/**
 * A receivable's history entries, oldest first. Nothing happens to a charge before it is received,
 * so the months of history before are not read (the history is partitioned by month on `at`). An
 * hour of slack: some entries carry the time of the instance that wrote them, whose clock may differ
 * a little from the database's.
 */
export function historyQuery(db: Kysely<ReceivablesDatabase>, receivable: { id: string; created_at: Date }) {
  return db
    .selectFrom('state_history')
    .select(['at', 'from_state', 'to_state', 'reason'])
    .where('receivable_id', '=', receivable.id)
    .where('at', '>=', new Date(receivable.created_at.getTime() - CLOCK_SLACK_MS))
    .orderBy('at')
    .orderBy('id');
}
