import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { envOptional } from '@payments/config';

/**
 * Secrets at rest (a provider account's credentials, a tenant's webhook signing secret): AES-256-GCM
 * with a 32-byte key from the environment (CREDENTIALS_ENCRYPTION_KEY, base64). A sealed value is
 * `v2.<kid>.<iv>.<tag>.<ciphertext>` (base64url): the kid names the key that sealed it, so the key can
 * be rotated (the old one kept in CREDENTIALS_PREVIOUS_KEYS until every row is sealed again). Values
 * sealed before key ids, `v1.<iv>.<tag>.<ciphertext>`, still open with any key of the keyring. What
 * a value is sealed for (an account id, a tenant) is bound in as associated data: a sealed value
 * copied onto another row does not open.
 */
const VERSION = 'v2';
const LEGACY_VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;

export class CredentialSealError extends Error {
  override readonly name = 'CredentialSealError';
}

/** Development default only (32 bytes, public): production must set CREDENTIALS_ENCRYPTION_KEY. */
export const DEV_CREDENTIALS_ENCRYPTION_KEY = Buffer.from('development-credentials-key-0001').toString('base64');

/** One key and its id (derived from the key, so no operator can mislabel it). */
export interface SealKey {
  readonly kid: string;
  readonly key: Buffer;
}

/** The key that seals (CREDENTIALS_ENCRYPTION_KEY) and older ones that still open (CREDENTIALS_PREVIOUS_KEYS). */
export interface Keyring {
  readonly current: SealKey;
  readonly previous: readonly SealKey[];
}

/**
 * A key's id: 8 base64url characters of a SHA-256 over a fixed label and the key. It names the key
 * in sealed values and listings without saying anything usable about it.
 */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('credential-seal kid\0').update(key).digest('base64url').slice(0, 8);
}

/** A keyring of `current` (seals and opens) and `previous` (open only). */
export function keyring(current: Buffer, previous: readonly Buffer[] = []): Keyring {
  const toKey = (key: Buffer): SealKey => ({ kid: keyId(key), key });
  const currentKey = toKey(current);
  return { current: currentKey, previous: previous.map(toKey).filter((k) => k.kid !== currentKey.kid) };
}

function ringOf(keys: Buffer | Keyring): Keyring {
  return Buffer.isBuffer(keys) ? keyring(keys) : keys;
}

/** Parses one key: 32 bytes in base64, or a CredentialSealError naming `variable`. */
export function parseEncryptionKey(base64: string, variable = 'CREDENTIALS_ENCRYPTION_KEY'): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== KEY_BYTES || key.toString('base64').replace(/=+$/, '') !== base64.trim().replace(/=+$/, ''))
    throw new CredentialSealError(`${variable} must be ${KEY_BYTES} bytes in base64`);
  return key;
}

/**
 * The keyring from CREDENTIALS_ENCRYPTION_KEY and CREDENTIALS_PREVIOUS_KEYS (comma-separated, each
 * 32 bytes in base64). A malformed key is a CredentialSealError naming the variable, never the value.
 */
export function parseKeyring(current: string, previous: string | undefined): Keyring {
  const older = (previous ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '')
    .map((k) => parseEncryptionKey(k, 'each key of CREDENTIALS_PREVIOUS_KEYS'));
  return keyring(parseEncryptionKey(current), older);
}

/** Seals `plaintext` with the keyring's current key (or the one key given), bound to `boundTo`. */
export function seal(keys: Buffer | Keyring, plaintext: string, boundTo: string): string {
  const { kid, key } = ringOf(keys).current;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(boundTo));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, kid, ...[iv, cipher.getAuthTag(), ciphertext].map((p) => p.toString('base64url'))].join('.');
}

interface Parsed {
  /** undefined for a v1 value, sealed before key ids. */
  kid: string | undefined;
  iv: string;
  tag: string;
  ciphertext: string;
}

function parse(sealed: string): Parsed {
  const parts = sealed.split('.');
  if (parts[0] === VERSION && parts.length === 5 && parts.slice(1, 4).every((p) => p !== ''))
    return { kid: parts[1], iv: parts[2]!, tag: parts[3]!, ciphertext: parts[4]! };
  if (parts[0] === LEGACY_VERSION && parts.length === 4 && parts[1] && parts[2])
    return { kid: undefined, iv: parts[1], tag: parts[2], ciphertext: parts[3]! };
  throw new CredentialSealError('not a sealed credential (expected v2.<kid>.<iv>.<tag>.<ciphertext>)');
}

/** The id of the key that sealed a value, or undefined for a v1 value (sealed before key ids). */
export function sealedKeyId(sealed: string): string | undefined {
  return parse(sealed).kid;
}

/** Whether a sealed value should be sealed again with the current key (an older or unnamed key sealed it). */
export function needsResealing(keys: Buffer | Keyring, sealed: string): boolean {
  return parse(sealed).kid !== ringOf(keys).current.kid;
}

/**
 * Opens a sealed value with the key its kid names (a v1 value: with each key in turn). A key that is
 * not in the keyring, a wrong key, a tampered value or another row's value is a CredentialSealError.
 */
export function open(keys: Buffer | Keyring, sealed: string, boundTo: string): string {
  const ring = ringOf(keys);
  const parsed = parse(sealed);
  const all = [ring.current, ...ring.previous];
  const candidates = parsed.kid === undefined ? all : all.filter((k) => k.kid === parsed.kid);
  if (candidates.length === 0)
    throw new CredentialSealError(
      `sealed with key ${parsed.kid}, which is neither CREDENTIALS_ENCRYPTION_KEY nor one of CREDENTIALS_PREVIOUS_KEYS`,
    );
  for (const { key } of candidates) {
    const plaintext = tryOpen(key, parsed, boundTo);
    if (plaintext !== undefined) return plaintext;
  }
  // The cause says nothing useful and must not echo any part of the secret.
  throw new CredentialSealError(
    'sealed credential does not open with CREDENTIALS_ENCRYPTION_KEY (wrong key or tampered)',
  );
}

function tryOpen(key: Buffer, { iv, tag, ciphertext }: Parsed, boundTo: string): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * The keyring an app reads from its environment: CREDENTIALS_ENCRYPTION_KEY seals, and with
 * CREDENTIALS_PREVIOUS_KEYS opens. Development falls back to the public DEV_CREDENTIALS_ENCRYPTION_KEY;
 * production refuses a missing key and that default (a previous key may be it, so rows sealed in a
 * development-mode deployment can be sealed again with a real key).
 */
export function keyringFromEnv(env: Record<string, string | undefined>, mode: 'development' | 'production'): Keyring {
  // Each from its variable, or from the file its `_FILE` variable names (a mounted secret).
  const given = envOptional('CREDENTIALS_ENCRYPTION_KEY', env);
  if (mode === 'production' && given === undefined)
    throw new CredentialSealError(
      'CREDENTIALS_ENCRYPTION_KEY is required in production (32 random bytes, base64: openssl rand -base64 32), the same in the gateway and receivables-svc',
    );
  if (mode === 'production' && given === DEV_CREDENTIALS_ENCRYPTION_KEY)
    throw new CredentialSealError(
      'CREDENTIALS_ENCRYPTION_KEY is the public development default: set a key of your own',
    );
  return parseKeyring(given ?? DEV_CREDENTIALS_ENCRYPTION_KEY, envOptional('CREDENTIALS_PREVIOUS_KEYS', env));
}
