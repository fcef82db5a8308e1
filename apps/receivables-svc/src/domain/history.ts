import type { Kysely } from 'kysely';
import { ServiceError, type ReceivableHistory } from '@payments/contracts';
import type { ReceivablesDatabase } from '../db/schema';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
  const receivable = UUID.test(accountReceivableId)
    ? await db
        .selectFrom('receivables')
        .select(['id', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('account_receivable_id', '=', accountReceivableId)
        .executeTakeFirst()
    : undefined;
  if (!receivable) throw new ServiceError('not_found', `no receivable ${accountReceivableId}`);
  const rows = await db
    .selectFrom('state_history')
    .select(['at', 'from_state', 'to_state', 'reason'])
    .where('receivable_id', '=', receivable.id)
    .orderBy('at')
    .orderBy('id')
    .execute();
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
