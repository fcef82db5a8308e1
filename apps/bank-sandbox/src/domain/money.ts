import { hasAtMostTwoDecimals, toCents } from '@payments/br-format';

/** Money in integer cents, and the sandbox's tariff. */

export type SettlementMethod = 'boleto' | 'pix' | 'manual';

/** R$ 1.99 per slip paid. */
export const SLIP_FEE_CENTS = 199;
/** 0.99 % of a PIX payment, in basis points. */
export const PIX_FEE_BASIS_POINTS = 99;

/** The sandbox tariff for one payment: slip flat, PIX a percentage rounded half-up to the cent, manual free. */
export function sandboxFeeCents(method: SettlementMethod, amountPaidCents: number): number {
  switch (method) {
    case 'boleto':
      return SLIP_FEE_CENTS;
    case 'pix':
      // Integer arithmetic: amountPaidCents * 99 stays far below 2^53 for any amount we accept.
      return Math.floor((amountPaidCents * PIX_FEE_BASIS_POINTS + 5_000) / 10_000);
    case 'manual':
      return 0;
  }
}

/** An amount paid, in reais with at most 2 decimals, as cents; null when it has more decimals or is not positive. */
export function paymentAmountCents(amount: number): number | null {
  return amount > 0 && hasAtMostTwoDecimals(amount) ? toCents(amount) : null;
}
