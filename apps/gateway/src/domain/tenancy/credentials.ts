import { createHash, randomBytes } from 'node:crypto';

/** Integration tokens: 256 random bits, shown once, stored as SHA-256 (enough for a random secret). */
export const INTEGRATION_TOKEN_PREFIX = 'itk_';

export function generateIntegrationToken(): string {
  return INTEGRATION_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashIntegrationToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export function tokenHint(token: string): string {
  return token.slice(0, INTEGRATION_TOKEN_PREFIX.length + 6);
}

/** Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return 'whsec_' + randomBytes(32).toString('base64');
}
