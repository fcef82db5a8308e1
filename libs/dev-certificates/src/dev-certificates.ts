import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';

/**
 * Certificate authorities and the certificates they sign, made at run time for mutual TLS in
 * development and tests (the bank sandbox's Inter dialect, our Inter adapter). RSA 2048, SHA-256.
 * Not for production: the private keys are generated in memory and written unprotected.
 */
export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
  /** Signs a certificate for a server (with these DNS names / IPs) or for a client. */
  issue(options: IssueOptions): IssuedCertificate;
}

export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  commonName: string;
  kind: 'server' | 'client';
  /** Server certificates: host names and IP addresses it answers for (default localhost, 127.0.0.1). */
  altNames?: string[];
  /** How long it is valid from now (default a day; it is valid from an hour ago, for clock skew). */
  validDays?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** A new CA, valid for `validDays` (default a day). */
export function createCertificateAuthority(commonName = 'Test CA', validDays = 1): CertificateAuthority {
  const keys = rsaKeyPair();
  const cert = baseCertificate(keys.publicKey, [{ name: 'commonName', value: commonName }], validDays);
  cert.setIssuer(cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return authority(cert, keys.privateKey);
}

/** A CA kept in PEM files (its certificate and its private key), able to sign again. */
export function loadCertificateAuthority(certPem: string, keyPem: string): CertificateAuthority {
  const cert = forge.pki.certificateFromPem(certPem);
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  return authority(cert, key);
}

function authority(cert: forge.pki.Certificate, key: forge.pki.rsa.PrivateKey): CertificateAuthority {
  return {
    certPem: forge.pki.certificateToPem(cert),
    keyPem: forge.pki.privateKeyToPem(key),
    issue: (options) => issue(cert, key, options),
  };
}

function issue(
  caCert: forge.pki.Certificate,
  caKey: forge.pki.rsa.PrivateKey,
  options: IssueOptions,
): IssuedCertificate {
  const keys = rsaKeyPair();
  const cert = baseCertificate(
    keys.publicKey,
    [{ name: 'commonName', value: options.commonName }],
    options.validDays ?? 1,
  );
  cert.setIssuer(caCert.subject.attributes);
  const altNames = (options.altNames ?? ['localhost', '127.0.0.1']).map((name) =>
    /^\d{1,3}(\.\d{1,3}){3}$/.test(name) ? { type: 7, ip: name } : { type: 2, value: name },
  );
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    options.kind === 'server' ? { name: 'extKeyUsage', serverAuth: true } : { name: 'extKeyUsage', clientAuth: true },
    ...(options.kind === 'server' ? [{ name: 'subjectAltName', altNames }] : []),
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}

function baseCertificate(
  publicKey: forge.pki.PublicKey,
  subject: forge.pki.CertificateField[],
  validDays: number,
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A positive serial of whole bytes, first byte 0x01-0x7f (no sign bit, no leading zero byte). The
  // earlier `0` + 30 hex digits (an odd length) gave a serial OpenSSL refused as "illegal padding" in
  // tls.createSecureContext for 7 certificates in 1,000 (0 in 1,500 now): a TLS test failed at random.
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x01;
  cert.serialNumber = serial.toString('hex');
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 60 * 60 * 1000);
  cert.validity.notAfter = new Date(now + validDays * DAY_MS);
  cert.setSubject(subject);
  return cert;
}

/** RSA 2048 from Node's native crypto (node-forge's pure JS generator takes seconds), as forge keys. */
function rsaKeyPair(): { publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    publicKey: forge.pki.publicKeyFromPem(publicKey),
    privateKey: forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey,
  };
}

/**
 * Writes a server certificate for 127.0.0.1/localhost, the CA and (when `withCaKey`) the CA's key to
 * `dir`, and returns the bank sandbox variables that start its Inter listener with them (mutual TLS
 * against that CA; with the CA's key it can also issue integrations).
 */
export function writeSandboxInterTls(
  ca: CertificateAuthority,
  dir: string,
  { withCaKey = false }: { withCaKey?: boolean } = {},
): Record<string, string> {
  const server = ca.issue({ commonName: 'bank-sandbox inter', kind: 'server' });
  const files = {
    cert: join(dir, 'inter-server.crt'),
    key: join(dir, 'inter-server.key'),
    ca: join(dir, 'inter-ca.crt'),
    caKey: join(dir, 'inter-ca.key'),
  };
  writeFileSync(files.cert, server.certPem);
  writeFileSync(files.key, server.keyPem, { mode: 0o600 });
  writeFileSync(files.ca, ca.certPem);
  if (withCaKey) writeFileSync(files.caKey, ca.keyPem, { mode: 0o600 });
  return {
    BANK_SANDBOX_INTER_TLS_CERT_FILE: files.cert,
    BANK_SANDBOX_INTER_TLS_KEY_FILE: files.key,
    BANK_SANDBOX_INTER_TLS_CA_FILE: files.ca,
    ...(withCaKey ? { BANK_SANDBOX_INTER_TLS_CA_KEY_FILE: files.caKey } : {}),
  };
}
