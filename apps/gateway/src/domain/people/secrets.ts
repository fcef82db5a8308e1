import { createHash, randomBytes } from 'node:crypto';
import { INVITATION_TOKEN_PREFIX, SESSION_ID_PREFIX } from '@payments/contracts';
import { open, seal, type Keyring } from '@payments/credential-seal';

/** `ses_` + 256 random bits: the only thing the console's cookie holds. */
export function newSessionId(): string {
  return SESSION_ID_PREFIX + randomBytes(32).toString('base64url');
}

/** `inv_` + 256 random bits: shown once, in the invitation link. */
export function newInvitationToken(): string {
  return INVITATION_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** What the database keeps of a session id or an invitation token: its SHA-256. */
export function secretHash(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** The SHA-256 of a credential as a limit key: never the credential itself. */
export function credentialKey(credential: string): string {
  return secretHash(credential).toString('base64url');
}

/** TOTP secrets are sealed, bound to the row holding them: a sealed secret copied elsewhere does not open. */
export function sealTotpSecret(keyring: Keyring, owner: 'user' | 'invitation', id: string, secret: string): string {
  return seal(keyring, secret, `console-totp:${owner}:${id}`);
}

export function openTotpSecret(keyring: Keyring, owner: 'user' | 'invitation', id: string, sealed: string): string {
  return open(keyring, sealed, `console-totp:${owner}:${id}`);
}
