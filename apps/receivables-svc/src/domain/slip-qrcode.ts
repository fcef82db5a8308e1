import type { Kysely } from 'kysely';
import { isUuid, ServiceError } from '@payments/contracts';
import { qrCodePng } from '@payments/slip-images';
import type { ReceivablesDatabase } from '../db/schema';

/**
 * The PNG QR code of a registered receivable's PIX copy-and-paste, for the gateway's signed link (the
 * link is the caller's credential, so no tenant is named here). Drawn here, not asked of the bank: Inter
 * serves no QR image. 8 pixels a module and a quiet zone of 2 modules, like the sandbox's, so it scans
 * on its own. Unknown, not registered yet, or without a PIX code: not_found.
 */
export async function slipQrCodePng(db: Kysely<ReceivablesDatabase>, receivableId: string): Promise<Buffer> {
  const row = isUuid(receivableId)
    ? await db
        .selectFrom('receivables')
        .select(['registration_status', 'pix_copy_and_paste'])
        .where('id', '=', receivableId.toLowerCase())
        .executeTakeFirst()
    : undefined;
  if (!row) throw new ServiceError('not_found', `no receivable ${receivableId}`);
  if (row.registration_status !== 'registered')
    throw new ServiceError('not_found', `receivable ${receivableId} is not registered with its bank (yet)`);
  if (!row.pix_copy_and_paste) throw new ServiceError('not_found', `receivable ${receivableId} has no PIX code`);
  return qrCodePng(row.pix_copy_and_paste, { scale: 8, margin: 2 });
}
