/** Money, percentages, dates and typeable lines written the Brazilian way, as slips and booklets print them; reais <-> cents. */

/** "R$ 1.234,56" from integer cents. */
export function formatReais(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const reais = Math.floor(abs / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${sign}R$ ${reais},${String(abs % 100).padStart(2, '0')}`;
}

/** "2,00%" from basis points (hundredths of a percent). */
export function formatPercent(basisPoints: number): string {
  return `${Math.floor(basisPoints / 100)},${String(basisPoints % 100).padStart(2, '0')}%`;
}

/** "DD/MM/YYYY" from "YYYY-MM-DD". */
export function formatBrazilianDate(date: string): string {
  return `${date.slice(8, 10)}/${date.slice(5, 7)}/${date.slice(0, 4)}`;
}

/** The typeable line as printed on a slip: "AAAAA.AAAAA BBBBB.BBBBBB CCCCC.CCCCCC D EEEEEEEEEEEEEE". */
export function formatTypeableLine(line: string): string {
  if (!/^\d{47}$/.test(line)) throw new RangeError(`a typeable line has 47 digits, got "${line}"`);
  return `${line.slice(0, 5)}.${line.slice(5, 10)} ${line.slice(10, 15)}.${line.slice(15, 21)} ${line.slice(21, 26)}.${line.slice(26, 32)} ${line[32]} ${line.slice(33)}`;
}

/* Money as the API writes it (a JSON number of reais, at most 2 decimals) and as we keep it (integer cents). */

/**
 * The whole number of cents a number of reais is, or null when it has more than 2 decimals (or is not
 * finite, or its cents are beyond the safe integers). A JSON number with 2 decimals is the double
 * nearest to cents / 100, and so is that division: equal exactly when the amount had no further
 * decimals, at any magnitude. (An absolute tolerance such as |v*100 - round(v*100)| < 1e-6 wrongly
 * rejects valid values above ~1e8, e.g. 1234567890.12, whose product by 100 is off by 1.5e-5.)
 */
function wholeCents(reais: number): number | null {
  if (!Number.isFinite(reais)) return null;
  const cents = Math.round(reais * 100);
  return Number.isSafeInteger(cents) && cents / 100 === reais ? cents + 0 : null; // + 0 turns -0 into 0
}

/** True when an amount in reais has at most 2 decimals, i.e. it is a whole number of cents. */
export function hasAtMostTwoDecimals(reais: number): boolean {
  return wholeCents(reais) !== null;
}

/** An amount in reais as integer cents; throws RangeError when it has more than 2 decimals. */
export function toCents(reais: number): number {
  const cents = wholeCents(reais);
  if (cents === null) throw new RangeError(`${reais} is not an amount with at most 2 decimals`);
  return cents;
}

/** Cents to the API's decimal amount (1234.5 for 123450): exact, since cents are integers below 2^53. */
export function fromCents(cents: number): number {
  return cents / 100;
}
