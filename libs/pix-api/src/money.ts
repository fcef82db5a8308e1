// The standard carries amounts as decimal strings with two places ("123.45"); our types carry cents.

const DECIMAL = /^(\d{1,10})\.(\d{2})$/;

/** "123.45" for 12345 cents. */
export function decimalOf(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new RangeError(`not an amount in cents: ${cents}`);
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** 12345 for "123.45", or null when the text is not the standard's decimal shape. */
export function centsOf(decimal: string): number | null {
  const match = DECIMAL.exec(decimal);
  if (!match) return null;
  return Number(match[1]) * 100 + Number(match[2]);
}

/** "2.50" for 250 basis points: the standard's percentages have two places, as basis points do. */
export function percentOfBasisPoints(basisPoints: number): string {
  return decimalOf(basisPoints);
}
