import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (a provider account's credentials): AES-256-GCM with a 32-byte key from the
 * environment (CREDENTIALS_ENCRYPTION_KEY, base64). A sealed value is `v1.<iv>.<tag>.<ciphertext>`
 * (base64url), so a key or format change can be told apart later. The account id is bound in as
 * associated data: a sealed value copied onto another account does not open.
 */
const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;

export class CredentialSealError extends Error {
  override readonly name = 'CredentialSealError';
}

/** Development default only (32 bytes, public): production must set CREDENTIALS_ENCRYPTION_KEY. */
export const DEV_CREDENTIALS_ENCRYPTION_KEY = Buffer.from('development-credentials-key-0001').toString('base64');

/** Parses CREDENTIALS_ENCRYPTION_KEY: 32 bytes in base64, or a CredentialSealError saying what is wrong. */
export function parseEncryptionKey(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== KEY_BYTES || key.toString('base64').replace(/=+$/, '') !== base64.trim().replace(/=+$/, ''))
    throw new CredentialSealError(`CREDENTIALS_ENCRYPTION_KEY must be ${KEY_BYTES} bytes in base64`);
  return key;
}

export function seal(key: Buffer, plaintext: string, boundTo: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(boundTo));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

/** Opens a sealed value; a wrong key, a tampered value or another account's value is a CredentialSealError. */
export function open(key: Buffer, sealed: string, boundTo: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== VERSION || !iv || !tag || ciphertext === undefined)
    throw new CredentialSealError('not a sealed credential (expected v1.<iv>.<tag>.<ciphertext>)');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    // The cause says nothing useful and must not echo any part of the secret.
    throw new CredentialSealError(
      'sealed credential does not open with CREDENTIALS_ENCRYPTION_KEY (wrong key or tampered)',
    );
  }
}
