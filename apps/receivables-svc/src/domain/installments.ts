import type { Kysely } from 'kysely';
import type { InstallmentsReply } from '@payments/contracts';
import type { ReceivablesDatabase } from '../db/schema';
import type { Payer } from './ports';
import { slipInstructions } from './registration';

/**
 * The installments of a booklet: every receivable of the tenant with that payment_slip_id that is
 * pending or paid, by due date (then id), leaving out cancelled and rejected ones (they are not to be
 * paid). The payee is the beneficiary of the first installment's provider account (null when it was
 * accepted before accounts existed: the sandbox's own payee), and the slip id as the ERP spelled it.
 */
export async function listInstallments(
  db: Kysely<ReceivablesDatabase>,
  tenantId: string,
  paymentSlipId: string,
): Promise<InstallmentsReply> {
  const rows = await db
    .selectFrom('receivables as r')
    .leftJoin('provider_accounts as a', 'a.id', 'r.provider_account_id')
    .selectAll('r')
    .select('a.beneficiary')
    .where('r.tenant_id', '=', tenantId)
    .where('r.payment_slip_id', '=', paymentSlipId)
    .where('r.state', 'in', ['pending', 'approved'])
    .orderBy('r.due_date')
    .orderBy('r.account_receivable_id')
    .execute();
  const installments = rows.map((r) => {
    const payer = r.payer as Payer;
    return {
      account_receivable_id: r.account_receivable_id,
      due_date: r.due_date,
      amount_cents: r.amount_cents,
      instructions: slipInstructions(r),
      state: r.state === 'approved' ? ('approved' as const) : ('pending' as const),
      payment_date: r.payment_date?.toISOString() ?? null,
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
  const spelling = await slipIdAsSent(db, tenantId, paymentSlipId);
  return { installments, payee: rows[0]?.beneficiary ?? null, ...(spelling ? { payment_slip_id: spelling } : {}) };
}

/** How the ERP spelled the payment slip id on the first charge it sent with it (any state). */
async function slipIdAsSent(
  db: Kysely<ReceivablesDatabase>,
  tenantId: string,
  paymentSlipId: string,
): Promise<string | undefined> {
  const first = await db
    .selectFrom('receivables')
    .select('payment_slip_id_as_sent')
    .where('tenant_id', '=', tenantId)
    .where('payment_slip_id', '=', paymentSlipId)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return first?.payment_slip_id_as_sent;
}
