import type { Kysely } from 'kysely';
import { isUuid, ServiceError, type PaymentData } from '@payments/contracts';
import type { ReceivablesDatabase } from '../db/schema';
import { paymentDataOf } from './callback-messages';

/**
 * A tenant's receivable's payment data (GET /api/v1/accounts-receivable/{uuid}/payment-data), by the
 * ERP's id in any spelling, as its registered callback carried it: an ERP whose receiver missed the
 * callback reads it here. Until the provider registered the charge there is none, so it is not found,
 * as is another tenant's id; once registered it stays readable, paid or cancelled.
 */
export async function receivablePaymentData(
  db: Kysely<ReceivablesDatabase>,
  tenantId: string,
  accountReceivableId: string,
): Promise<PaymentData> {
  const row = isUuid(accountReceivableId)
    ? await db
        .selectFrom('receivables')
        .select(['typeable_line', 'barcode', 'our_number', 'pix_copy_and_paste', 'qrcode_image_url', 'pdf_url'])
        .where('tenant_id', '=', tenantId)
        .where('account_receivable_id', '=', accountReceivableId)
        .where('registration_status', '=', 'registered')
        .executeTakeFirst()
    : undefined;
  if (!row) throw new ServiceError('not_found', `no registered receivable ${accountReceivableId}`);
  return paymentDataOf(row);
}
