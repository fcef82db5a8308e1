import type { ChargeTerms } from './charge';
import { formatBrazilianDate, formatPercent, formatReais } from '@payments/br-format';

/** "21/02/2025" from "2025-02-21": dates as printed on a Brazilian slip. */

/** The instruction lines printed on a slip: discount, fine and interest terms first, then the payee's own. */
export function instructionLines(
  terms: Pick<ChargeTerms, 'discount' | 'finePercentBp' | 'interestPerDayCents' | 'instructions'>,
): string[] {
  const lines: string[] = [];
  if (terms.discount) {
    lines.push(
      `Conceder desconto de ${formatReais(terms.discount.amountCents)} para pagamento até ${formatBrazilianDate(terms.discount.until)}.`,
    );
  }
  if (terms.finePercentBp > 0) lines.push(`Após o vencimento, cobrar multa de ${formatPercent(terms.finePercentBp)}.`);
  if (terms.interestPerDayCents > 0)
    lines.push(`Após o vencimento, cobrar juros de ${formatReais(terms.interestPerDayCents)} por dia de atraso.`);
  return [...lines, ...terms.instructions];
}
