import type { Kysely } from 'kysely';
import type { Logger } from '@payments/logger';
import type { ReceivablesDatabase } from '../db/schema';
import { findCharge, recordPayment, type ChargeScope, type PaymentRecord } from './payments';
import type { PaymentProvider, ProviderAccount } from './ports';

export interface ConfirmationDeps {
  db: Kysely<ReceivablesDatabase>;
  timeZone: string;
  logger: Logger;
}

/** What a notice came to: a recorded payment (PaymentRecord), or why nothing changed. */
export type ConfirmationResult = PaymentRecord | 'not_paid' | 'unknown_charge';

/**
 * A notice that a charge of this account may have changed, from a bank whose notices are not proof
 * (Inter): nothing changes on its word. The bank is consulted, and only a charge it reports paid is
 * recorded, with the amounts and date the bank gives. A paid charge counts once: the event id is the
 * charge's payment, however often it is notified. The consulted state decides, whatever ours is: a
 * charge we hold as cancelled or rejected that the bank reports paid is kept for a refund decision
 * ('needs_refund', the charge keeps its state); one the bank reports open or cancelled changes nothing.
 * ProviderUnavailableError (the bank cannot be asked) propagates, so the notice is retried.
 */
export async function confirmPayment(
  deps: ConfirmationDeps,
  provider: PaymentProvider,
  account: ProviderAccount,
  chargeId: string,
): Promise<ConfirmationResult> {
  const scope: ChargeScope = { accountId: account.id, tenantId: account.tenantId };
  const charge = await findCharge(deps.db, scope, chargeId);
  if (!charge) return 'unknown_charge';
  if (charge.state === 'approved') return 'already_paid';
  const state = await provider.consult(account, chargeId);
  if (state.kind !== 'paid') return 'not_paid';
  const eventId = `${account.provider}:${account.id}:${chargeId}:paid`;
  return recordPayment(deps.db, { eventId, chargeId, ...state.payment }, scope, deps.timeZone, deps.logger);
}
