import { CredentialSealError, open } from '@payments/credential-seal';
import type { InterCredentials } from '@payments/contracts';
import type { ProviderAccount } from '../domain/ports';

/**
 * An account's credentials could not be opened (none stored, wrong CREDENTIALS_ENCRYPTION_KEY, or not
 * what the provider needs). The message names the account only: never any part of the secret.
 */
export class CredentialsUnavailableError extends Error {
  override readonly name = 'CredentialsUnavailableError';
}

const INTER_FIELDS = ['client_id', 'client_secret', 'cert_pem', 'key_pem'] as const;

/**
 * The one place where sealed credentials are opened: with CREDENTIALS_ENCRYPTION_KEY, bound to the
 * account version id (a sealed value copied onto another account does not open). The result is held
 * only by the caller that needs it; nothing here logs.
 */
export function interCredentialOpener(key: Buffer): (account: ProviderAccount) => InterCredentials {
  return (account) => {
    if (account.sealedCredentials === null)
      throw new CredentialsUnavailableError(`provider account ${account.id} has no credentials`);
    let plaintext: string;
    try {
      plaintext = open(key, account.sealedCredentials, account.id);
    } catch (err) {
      if (err instanceof CredentialSealError)
        throw new CredentialsUnavailableError(`provider account ${account.id}: ${err.message}`);
      throw err;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(plaintext);
    } catch {
      parsed = null; // the parser's message could quote the plaintext
    }
    if (!isInterCredentials(parsed))
      throw new CredentialsUnavailableError(
        `provider account ${account.id}: its credentials are not inter credentials (${INTER_FIELDS.join(', ')})`,
      );
    return parsed;
  };
}

function isInterCredentials(value: unknown): value is InterCredentials {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return INTER_FIELDS.every((field) => typeof record[field] === 'string' && record[field] !== '');
}
