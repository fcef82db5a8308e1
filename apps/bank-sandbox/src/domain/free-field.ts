/**
 * The 25-digit free field (campo livre, barcode positions 20-44) is the bank's own. The sandbox uses
 * the layout Bradesco publishes, which carries our_number whole so a payment can be matched by it:
 *
 *   positions  1-4   agency (4)
 *              5-6   wallet (carteira, 2)
 *              7-17  our_number (nosso número, 11, zero-padded)
 *             18-24  account (7, zero-padded, without its check digit)
 *             25     0 (fixed)
 */
export interface FreeFieldParts {
  agency: string;
  wallet: string;
  ourNumber: string;
  account: string;
}

const LAYOUT: ReadonlyArray<[keyof FreeFieldParts, number]> = [
  ['agency', 4],
  ['wallet', 2],
  ['ourNumber', 11],
  ['account', 7],
];

export function buildFreeField(parts: FreeFieldParts): string {
  const field = LAYOUT.map(([name, size]) => {
    const value = parts[name];
    if (!new RegExp(`^\\d{1,${size}}$`).test(value))
      throw new RangeError(`${name} must be 1 to ${size} digits, got "${value}"`);
    return value.padStart(size, '0');
  }).join('');
  return `${field}0`;
}

export function parseFreeField(field: string): FreeFieldParts {
  if (!/^\d{24}0$/.test(field)) throw new RangeError(`not a sandbox free field (25 digits ending in 0): "${field}"`);
  let offset = 0;
  const parts: Partial<FreeFieldParts> = {};
  for (const [name, size] of LAYOUT) {
    parts[name] = field.slice(offset, offset + size);
    offset += size;
  }
  return parts as FreeFieldParts;
}
