import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority, loadCertificateAuthority, writeSandboxInterTls } from '../src';

const DAY_MS = 86_400_000;

it('a CA signs server certificates (with their names) and client certificates, valid for the days asked', () => {
  const ca = createCertificateAuthority('Test CA', 10);
  const caCert = new X509Certificate(ca.certPem);
  expect(caCert.ca).toBe(true);
  expect(Date.parse(caCert.validTo) - Date.now()).toBeGreaterThan(9 * DAY_MS);
  const server = new X509Certificate(ca.issue({ commonName: 'srv', kind: 'server', validDays: 2 }).certPem);
  expect(server.verify(caCert.publicKey)).toBe(true);
  expect(server.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1');
  expect(Date.parse(server.validTo) - Date.now()).toBeLessThan(3 * DAY_MS);
  const client = new X509Certificate(ca.issue({ commonName: 'cli', kind: 'client' }).certPem);
  expect(client.verify(caCert.publicKey)).toBe(true);
  expect(client.ca).toBe(false);
});

it('a CA read back from its PEM files signs as the original', () => {
  const original = createCertificateAuthority('Kept CA');
  const kept = loadCertificateAuthority(original.certPem, original.keyPem);
  const issued = new X509Certificate(kept.issue({ commonName: 'later', kind: 'client' }).certPem);
  expect(issued.verify(new X509Certificate(original.certPem).publicKey)).toBe(true);
});

it('writes the bank sandbox`s Inter TLS files, the CA key only when asked', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dev-certs-'));
  try {
    const ca = createCertificateAuthority();
    const without = writeSandboxInterTls(ca, dir);
    expect(Object.keys(without).sort()).toEqual([
      'BANK_SANDBOX_INTER_TLS_CA_FILE',
      'BANK_SANDBOX_INTER_TLS_CERT_FILE',
      'BANK_SANDBOX_INTER_TLS_KEY_FILE',
    ]);
    expect(existsSync(join(dir, 'inter-ca.key'))).toBe(false);
    const withKey = writeSandboxInterTls(ca, dir, { withCaKey: true });
    expect(readFileSync(withKey.BANK_SANDBOX_INTER_TLS_CA_KEY_FILE, 'utf8')).toBe(ca.keyPem);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
