import type { Charge, ChargeOwner, Settlement } from './charge';

/** The body of the provider webhook the sandbox sends when a charge is paid. */
export interface ChargePaidEvent {
  event: 'charge.paid';
  charge_id: string;
  our_number: string;
  /** The caller's account id given with the charge (null when none was): tells whose charge was paid. */
  account_reference: string | null;
  /** ISO 8601, UTC. */
  paid_at: string;
  amount_paid_cents: number;
  fee_cents: number;
  method: Settlement['method'];
}

export function chargePaidEvent(
  charge: Pick<Charge, 'chargeId' | 'ourNumber'> & Pick<ChargeOwner, 'accountReference'>,
  settlement: Settlement,
): ChargePaidEvent {
  return {
    event: 'charge.paid',
    charge_id: charge.chargeId,
    our_number: charge.ourNumber,
    account_reference: charge.accountReference,
    paid_at: settlement.paidAt.toISOString(),
    amount_paid_cents: settlement.amountPaidCents,
    fee_cents: settlement.feeCents,
    method: settlement.method,
  };
}
