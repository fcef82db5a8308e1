import { createHmac, timingSafeEqual } from 'node:crypto';
import { envOptional } from '@payments/config';

/**
 * Signed, expiring links (like an object store's presigned URLs): whoever holds the link may fetch
 * the resource until it expires, without a bearer token. The signature is an HMAC-SHA256 of
 * "<resource id>.<expires>" with a secret the signer and the verifier share.
 */
export type LinkCheck = 'valid' | 'tampered' | 'expired';

export function signLink(secret: string, resourceId: string, expiresAt: Date): { expires: string; signature: string } {
  const expires = String(Math.floor(expiresAt.getTime() / 1000));
  return { expires, signature: mac(secret, resourceId, expires) };
}

export function checkLink(
  secret: string,
  resourceId: string,
  expires: string | undefined,
  signature: string | undefined,
  now: Date = new Date(),
): LinkCheck {
  if (!expires || !signature || !/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return 'tampered';
  const expected = Buffer.from(mac(secret, resourceId, expires), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'tampered';
  return Number(expires) * 1000 < now.getTime() ? 'expired' : 'valid';
}

function mac(secret: string, resourceId: string, expires: string): string {
  return createHmac('sha256', secret).update(`${resourceId}.${expires}`).digest('hex');
}

/** Development default only: production must set DOWNLOAD_LINK_SECRET, the same for the signer and the gateway. */
export const DEV_DOWNLOAD_LINK_SECRET = 'development-download-link-secret';

export function downloadLinkSecret(
  env: Record<string, string | undefined>,
  nodeEnv: 'development' | 'production',
): string {
  // Its variable, or the file DOWNLOAD_LINK_SECRET_FILE names (a mounted secret).
  const secret = envOptional('DOWNLOAD_LINK_SECRET', env);
  if (secret) return secret;
  if (nodeEnv === 'production') throw new Error('DOWNLOAD_LINK_SECRET is required in production');
  return DEV_DOWNLOAD_LINK_SECRET;
}
