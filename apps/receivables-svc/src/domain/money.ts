/** Cents to the spec's decimal amount (1234.5 for 123450): exact, since cents are integers below 2^53. */
export function fromCents(cents: number): number {
  return cents / 100;
}
