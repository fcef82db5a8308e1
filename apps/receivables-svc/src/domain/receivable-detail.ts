import type { Kysely } from 'kysely';
import { fromCents } from '@payments/br-format';
import { isUuid, ServiceError, StateLabels, type ReceivableDetail } from '@payments/contracts';
import { taxIdDigits } from '@payments/tax-id';
import type { ReceivablesDatabase } from '../db/schema';
import type { Payer } from './ports';

/**
 * A tenant's receivable as it was issued (GET /api/v1/accounts-receivable/{uuid}), by the ERP's id
 * in any spelling, answered in the spellings it was created with: what a support person is asked on
 * the phone, its due date, amount and payer with tax id. The payer is the one printed on the slip,
 * not the client as it may have been updated since. Another tenant's id is not found.
 */
export async function receivableDetail(
  db: Kysely<ReceivablesDatabase>,
  tenantId: string,
  accountReceivableId: string,
): Promise<ReceivableDetail> {
  const row = isUuid(accountReceivableId)
    ? await db
        .selectFrom('receivables')
        .select([
          'account_receivable_id_as_sent',
          'client_id_as_sent',
          'payment_slip_id_as_sent',
          'payment_method',
          'state',
          'amount_cents',
          'emission_date',
          'due_date',
          'payer',
        ])
        .where('tenant_id', '=', tenantId)
        .where('account_receivable_id', '=', accountReceivableId.toLowerCase())
        .executeTakeFirst()
    : undefined;
  if (!row) throw new ServiceError('not_found', `no receivable ${accountReceivableId}`);
  const payer = row.payer as Payer;
  return {
    accounts_receivable_id: row.account_receivable_id_as_sent,
    client_id: row.client_id_as_sent,
    payment_slip_id: row.payment_slip_id_as_sent,
    payment_method: row.payment_method,
    status_payment: StateLabels[row.state],
    value: fromCents(row.amount_cents),
    emission_date: row.emission_date,
    due_date: row.due_date,
    payer: { name: payer.name, tax_id: taxIdDigits(payer.taxId) },
  };
}
