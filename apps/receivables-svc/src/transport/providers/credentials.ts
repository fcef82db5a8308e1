import { CredentialSealError, open, type Keyring } from '@payments/credential-seal';
import type { InterCredentials, PixCredentials } from '@payments/contracts';
import type { ProviderAccount } from '../../domain/ports';

/**
 * An account's credentials could not be opened (none stored, wrong CREDENTIALS_ENCRYPTION_KEY, or not
 * what the provider needs). The message names the account only: never any part of the secret.
 */
export class CredentialsUnavailableError extends Error {
  override readonly name = 'CredentialsUnavailableError';
}

const INTER_FIELDS = ['client_id', 'client_secret', 'cert_pem', 'key_pem'] as const;

/** Sealed credentials and the account version they were sealed for (they open bound to its id). */
export interface SealedCredentials {
  versionId: string;
  sealed: string | null;
}

/** Where the newest credentials of a tenant's bank account come from (the gateway, over the bus); null: unknown key. */
export type NewestCredentials = (tenantId: string, accountKey: string) => Promise<SealedCredentials | null>;

/**
 * Credentials ready for a call, and the version they belong to (a client built from them is cached by
 * it). A `pix` account's carry its token URL (PixCredentials); an `inter` account's have none.
 */
export interface OpenedCredentials {
  versionId: string;
  credentials: InterCredentials & Partial<Pick<PixCredentials, 'token_url'>>;
}

/**
 * The credentials a call to the bank uses for a charge's account: the newest ones of the same bank
 * account (account key), so a renewed certificate or secret reaches charges accepted before it, while
 * each charge keeps the beneficiary it was accepted under. Asked of the gateway at most every `ttlMs`
 * per account; when the gateway cannot be asked, the charge's own version is used.
 */
export class InterCredentialSource {
  private readonly cache = new Map<string, { at: number; sealed: SealedCredentials }>();

  constructor(
    private readonly key: Buffer | Keyring,
    private readonly newest: NewestCredentials,
    private readonly ttlMs = 5_000,
  ) {}

  async credentialsFor(account: ProviderAccount): Promise<OpenedCredentials> {
    const sealed = await this.newestSealed(account);
    const credentials = openInterCredentials(this.key, sealed);
    if (account.provider === 'pix' && !hasTokenUrl(credentials))
      throw new CredentialsUnavailableError(
        `provider account ${sealed.versionId}: its credentials are not pix credentials (token_url missing)`,
      );
    return { versionId: sealed.versionId, credentials };
  }

  private async newestSealed(account: ProviderAccount): Promise<SealedCredentials> {
    const own = { versionId: account.id, sealed: account.sealedCredentials };
    const cacheKey = `${account.tenantId}:${account.accountKey}`;
    const cached = this.cache.get(cacheKey);
    if (cached && Date.now() - cached.at < this.ttlMs) return cached.sealed;
    let found: SealedCredentials | null;
    try {
      found = await this.newest(account.tenantId, account.accountKey);
    } catch {
      return cached?.sealed ?? own; // the gateway is out of reach: what we knew last, else the charge's own
    }
    const sealed = found ?? own;
    this.cache.set(cacheKey, { at: Date.now(), sealed });
    return sealed;
  }
}

/**
 * The one place where sealed credentials are opened: with CREDENTIALS_ENCRYPTION_KEY, bound to the
 * account version id (a sealed value copied onto another account does not open). The result is held
 * only by the caller that needs it; nothing here logs.
 */
export function interCredentialOpener(key: Buffer | Keyring): (account: ProviderAccount) => InterCredentials {
  return (account) => openInterCredentials(key, { versionId: account.id, sealed: account.sealedCredentials });
}

function openInterCredentials(key: Buffer | Keyring, { versionId, sealed }: SealedCredentials): InterCredentials {
  if (sealed === null) throw new CredentialsUnavailableError(`provider account ${versionId} has no credentials`);
  let plaintext: string;
  try {
    plaintext = open(key, sealed, versionId);
  } catch (err) {
    if (err instanceof CredentialSealError)
      throw new CredentialsUnavailableError(`provider account ${versionId}: ${err.message}`);
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
      `provider account ${versionId}: its credentials are not inter credentials (${INTER_FIELDS.join(', ')})`,
    );
  return parsed;
}

function isInterCredentials(value: unknown): value is InterCredentials {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return INTER_FIELDS.every((field) => typeof record[field] === 'string' && record[field] !== '');
}

/** A `pix` account's credentials name where its tokens are issued (an absolute https or http URL). */
function hasTokenUrl(credentials: InterCredentials): credentials is PixCredentials {
  const tokenUrl = (credentials as Partial<PixCredentials>).token_url;
  if (typeof tokenUrl !== 'string') return false;
  try {
    return ['https:', 'http:'].includes(new URL(tokenUrl).protocol);
  } catch {
    return false;
  }
}
