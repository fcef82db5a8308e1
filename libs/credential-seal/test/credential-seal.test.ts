import { createCipheriv, randomBytes } from 'node:crypto';
import {
  CredentialSealError,
  DEV_CREDENTIALS_ENCRYPTION_KEY,
  keyId,
  keyringFromEnv,
  keyring,
  needsResealing,
  open,
  parseEncryptionKey,
  parseKeyring,
  seal,
  sealedKeyId,
} from '../src';

/** A value as sealed before key ids existed: v1.<iv>.<tag>.<ciphertext>. */
function sealV1(key: Buffer, plaintext: string, boundTo: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(boundTo));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', ...[iv, cipher.getAuthTag(), ciphertext].map((p) => p.toString('base64url'))].join('.');
}

describe('credential-seal', () => {
  const key = randomBytes(32);

  it('opens what it sealed, names the key that sealed it, and the sealed text does not contain the secret', () => {
    const sealed = seal(key, 'client-secret-123', 'account-a');
    expect(sealed).toMatch(/^v2\.[A-Za-z0-9_-]{8}\./);
    expect(sealedKeyId(sealed)).toBe(keyId(key));
    expect(sealed).not.toContain('client-secret-123');
    expect(open(key, sealed, 'account-a')).toBe('client-secret-123');
  });

  it('seals the same text differently each time (random IV)', () => {
    expect(seal(key, 'x', 'a')).not.toBe(seal(key, 'x', 'a'));
  });

  it('refuses another key, another account, and a tampered value', () => {
    const sealed = seal(key, 'secret', 'account-a');
    expect(() => open(randomBytes(32), sealed, 'account-a')).toThrow(CredentialSealError);
    expect(() => open(key, sealed, 'account-b')).toThrow(CredentialSealError);
    const parts = sealed.split('.');
    parts[4] = Buffer.from('other').toString('base64url');
    expect(() => open(key, parts.join('.'), 'account-a')).toThrow(CredentialSealError);
    expect(() => open(key, 'garbage', 'account-a')).toThrow(/not a sealed credential/);
  });

  it('still opens v1 values sealed before key ids, with any key of the keyring', () => {
    const older = randomBytes(32);
    const legacy = sealV1(older, 'old secret', 'account-a');
    expect(open(older, legacy, 'account-a')).toBe('old secret');
    expect(open(keyring(randomBytes(32), [older]), legacy, 'account-a')).toBe('old secret');
    expect(() => open(randomBytes(32), legacy, 'account-a')).toThrow(/wrong key or tampered/);
    expect(sealedKeyId(legacy)).toBeUndefined();
    expect(needsResealing(older, legacy)).toBe(true);
  });

  it('a keyring seals with its current key and opens with the previous ones; an unknown kid is named', () => {
    const older = randomBytes(32);
    const newer = randomBytes(32);
    const before = seal(older, 'secret', 'tenant-1');
    const ring = keyring(newer, [older]);
    expect(open(ring, before, 'tenant-1')).toBe('secret');
    expect(needsResealing(ring, before)).toBe(true);
    const after = seal(ring, 'secret', 'tenant-1');
    expect(sealedKeyId(after)).toBe(keyId(newer));
    expect(needsResealing(ring, after)).toBe(false);
    // Without the old key in the ring, the value names the key it needs.
    expect(() => open(keyring(newer), before, 'tenant-1')).toThrow(
      new RegExp(`sealed with key ${keyId(older)}, which is neither`),
    );
  });

  it('accepts a 32-byte base64 key only', () => {
    expect(parseEncryptionKey(DEV_CREDENTIALS_ENCRYPTION_KEY)).toHaveLength(32);
    expect(parseEncryptionKey(randomBytes(32).toString('base64'))).toHaveLength(32);
    expect(() => parseEncryptionKey(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
    expect(() => parseEncryptionKey('not base64 at all!')).toThrow(/32 bytes/);
  });

  it('parses CREDENTIALS_PREVIOUS_KEYS as a comma-separated list, naming the variable of a bad key', () => {
    const a = randomBytes(32);
    const b = randomBytes(32);
    const ring = parseKeyring(a.toString('base64'), ` ${b.toString('base64')} , ${a.toString('base64')}`);
    expect(ring.current.kid).toBe(keyId(a));
    // The current key listed again among the previous ones is not kept twice.
    expect(ring.previous.map((k) => k.kid)).toEqual([keyId(b)]);
    expect(parseKeyring(a.toString('base64'), undefined).previous).toEqual([]);
    expect(() => parseKeyring(a.toString('base64'), 'c2hvcnQ=')).toThrow(/CREDENTIALS_PREVIOUS_KEYS must be 32 bytes/);
  });
});

describe('keyringFromEnv', () => {
  it('development falls back to the public key; production needs a key of its own', () => {
    const dev = parseEncryptionKey(DEV_CREDENTIALS_ENCRYPTION_KEY);
    expect(keyringFromEnv({}, 'development').current.kid).toBe(keyId(dev));
    expect(() => keyringFromEnv({}, 'production')).toThrow(/CREDENTIALS_ENCRYPTION_KEY is required in production/);
    expect(() => keyringFromEnv({ CREDENTIALS_ENCRYPTION_KEY: DEV_CREDENTIALS_ENCRYPTION_KEY }, 'production')).toThrow(
      /public development default/,
    );
    const own = randomBytes(32);
    // The development key may be a previous one: rows sealed with it can be sealed again.
    const ring = keyringFromEnv(
      { CREDENTIALS_ENCRYPTION_KEY: own.toString('base64'), CREDENTIALS_PREVIOUS_KEYS: DEV_CREDENTIALS_ENCRYPTION_KEY },
      'production',
    );
    expect(ring.current.kid).toBe(keyId(own));
    expect(ring.previous.map((k) => k.kid)).toEqual([keyId(dev)]);
  });
});
