import { createHash } from 'node:crypto';

export const SEU_NUMERO_MAX = 15;
const MODULUS = 10n ** BigInt(SEU_NUMERO_MAX);

/**
 * The seuNumero we give Inter for one of our charges: 15 decimal digits taken from SHA-256 of our id,
 * so a retry of the same charge always sends the same value and we can find it again by listing.
 * Digits only: every source shows numeric seuNumero, none confirms that letters are accepted. Two ids
 * collide with probability 1e-15 per pair; lookups also filter by due date and compare amounts.
 */
export function seuNumeroFor(ourId: string): string {
  const digest = createHash('sha256').update(ourId.toLowerCase(), 'utf8').digest();
  return (digest.readBigUInt64BE(0) % MODULUS).toString().padStart(SEU_NUMERO_MAX, '0');
}
