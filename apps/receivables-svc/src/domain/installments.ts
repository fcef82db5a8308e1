import type { Kysely } from 'kysely';
import type { InstallmentView } from '@payments/contracts';
import type { ReceivablesDatabase } from '../db/schema';
import type { Payer } from './ports';
import { slipInstructions } from './registration';

/**
 * The installments of a booklet: every receivable of the tenant with that payment_slip_id, by due
 * date, leaving out cancelled and rejected ones (they are not to be paid).
 */
export async function listInstallments(
  db: Kysely<ReceivablesDatabase>,
  tenantId: string,
  paymentSlipId: string,
): Promise<InstallmentView[]> {
  const rows = await db
    .selectFrom('receivables')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('payment_slip_id', '=', paymentSlipId)
    .where('state', 'in', ['pending', 'approved'])
    .orderBy('due_date')
    .orderBy('account_receivable_id')
    .execute();
  return rows.map((r) => {
    const payer = r.payer as Payer;
    return {
      account_receivable_id: r.account_receivable_id,
      due_date: r.due_date,
      amount_cents: r.amount_cents,
      instructions: slipInstructions(r),
      registered: r.registration_status === 'registered',
      our_number: r.our_number,
      typeable_line: r.typeable_line,
      barcode: r.barcode,
      pix_copy_and_paste: r.pix_copy_and_paste,
      payer: {
        name: payer.name,
        cnpj_cpf: payer.taxId,
        address: payer.address,
        number: payer.number,
        neighborhood: payer.neighborhood,
        city: payer.city,
        state: payer.state,
        zip_code: payer.zipCode,
      },
    };
  });
}
