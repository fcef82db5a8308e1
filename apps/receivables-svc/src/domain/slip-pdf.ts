import type { Kysely } from 'kysely';
import { isUuid, ServiceError } from '@payments/contracts';
import type { ReceivablesDatabase } from '../db/schema';
import { ProviderUnavailableError, type PaymentProviders, type ProviderAccounts } from './ports';

export interface SlipPdfDeps {
  db: Kysely<ReceivablesDatabase>;
  providers: PaymentProviders;
  accounts: ProviderAccounts;
}

/**
 * The slip PDF of a registered receivable, fetched from its bank with its account (for the gateway's
 * signed link: the link is the caller's credential, so no tenant is named here). Unknown or not
 * registered yet: not_found; the bank out of reach: service_unavailable.
 */
export async function fetchSlipPdf(deps: SlipPdfDeps, receivableId: string): Promise<Buffer> {
  const row = isUuid(receivableId)
    ? await deps.db
        .selectFrom('receivables')
        .select(['provider_account_id', 'provider_charge_id', 'registration_status'])
        .where('id', '=', receivableId.toLowerCase())
        .executeTakeFirst()
    : undefined;
  if (!row) throw new ServiceError('not_found', `no receivable ${receivableId}`);
  if (row.registration_status !== 'registered' || row.provider_charge_id === null)
    throw new ServiceError('not_found', `receivable ${receivableId} is not registered with its bank (yet)`);
  const account = await deps.accounts.forReceivable(row.provider_account_id);
  try {
    return await deps.providers[account.provider].slipPdf(account, row.provider_charge_id);
  } catch (err) {
    if (err instanceof ProviderUnavailableError)
      throw new ServiceError('service_unavailable', `the bank could not serve the slip PDF now: ${err.message}`);
    throw err;
  }
}
