/**
 * Check digits of the FEBRABAN bank slip (boleto de cobrança bancária).
 * Both walk the digits from the right; they differ in weights and in how the remainder becomes a digit.
 */

function assertDigits(digits: string): void {
  if (!/^\d+$/.test(digits)) throw new RangeError(`expected only digits, got "${digits}"`);
}

/**
 * Modulo 10 of the typeable line's fields: weights 2, 1, 2, 1 ... from the rightmost digit, a product
 * above 9 counts as the sum of its digits (14 -> 1 + 4), and the digit is 10 - (sum mod 10), 10 -> 0.
 */
export function modulo10(digits: string): number {
  assertDigits(digits);
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i -= 1) {
    const product = Number(digits[i]) * weight;
    sum += product > 9 ? product - 9 : product; // for 10..18, the digit sum is product - 9
    weight = weight === 2 ? 1 : 2;
  }
  return (10 - (sum % 10)) % 10;
}

/**
 * The bank slip's general check digit (barcode position 5): modulo 11 with weights 2..9 repeating from
 * the rightmost digit, digit = 11 - (sum mod 11), and 0, 10 or 11 become 1.
 * This is the BANK-slip rule; utility bills (collection, barcode starting with 8) map those to 0 instead.
 */
export function bankSlipModulo11(digits: string): number {
  assertDigits(digits);
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i -= 1) {
    sum += Number(digits[i]) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const digit = 11 - (sum % 11);
  return digit === 0 || digit === 10 || digit === 11 ? 1 : digit;
}
