import type { Transaction } from 'kysely';
import type { ReceivableState } from '@payments/contracts';
import type { ReceivablesDatabase } from '../db/schema';

/** Every state change is written beside the change, in the same transaction. */
export async function recordTransition(
  trx: Transaction<ReceivablesDatabase>,
  rows: Array<{ id: string; tenant_id: string }>,
  from: ReceivableState | null,
  to: ReceivableState,
  reason: string,
): Promise<void> {
  if (rows.length === 0) return;
  await trx
    .insertInto('state_history')
    .values(rows.map((r) => ({ receivable_id: r.id, tenant_id: r.tenant_id, from_state: from, to_state: to, reason })))
    .execute();
}
