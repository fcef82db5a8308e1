import { randomBytes } from 'node:crypto';
import { CredentialSealError, DEV_CREDENTIALS_ENCRYPTION_KEY, open, parseEncryptionKey, seal } from '../src';

describe('credential-seal', () => {
  const key = randomBytes(32);

  it('opens what it sealed, and the sealed text does not contain the secret', () => {
    const sealed = seal(key, 'client-secret-123', 'account-a');
    expect(sealed).toMatch(/^v1\./);
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
    parts[3] = Buffer.from('other').toString('base64url');
    expect(() => open(key, parts.join('.'), 'account-a')).toThrow(CredentialSealError);
    expect(() => open(key, 'garbage', 'account-a')).toThrow(/not a sealed credential/);
  });

  it('accepts a 32-byte base64 key only', () => {
    expect(parseEncryptionKey(DEV_CREDENTIALS_ENCRYPTION_KEY)).toHaveLength(32);
    expect(parseEncryptionKey(randomBytes(32).toString('base64'))).toHaveLength(32);
    expect(() => parseEncryptionKey(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
    expect(() => parseEncryptionKey('not base64 at all!')).toThrow(/32 bytes/);
  });
});
