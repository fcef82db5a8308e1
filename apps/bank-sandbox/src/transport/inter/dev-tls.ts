import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCertificateAuthority, loadCertificateAuthority } from '@payments/dev-certificates';
import type { InterTlsFiles } from '../../inter-config';

/** A development CA is good for ten years; the server certificate it signs for two. */
const CA_DAYS = 3_650;
const SERVER_DAYS = 730;

/**
 * The development CA and server certificate of the Inter dialect in `dir` (DEV_INTER_SANDBOX_DIR):
 * created on the first start and kept across starts, so receivables-svc, which trusts `ca.pem`, and
 * the integrations already handed out keep working. A missing server certificate is signed anew by
 * the kept CA; a missing CA (or its key) makes a new CA and server certificate.
 */
export function ensureDevInterTls(dir: string): InterTlsFiles {
  const files = {
    caFile: join(dir, 'ca.pem'),
    caKeyFile: join(dir, 'ca-key.pem'),
    certFile: join(dir, 'server.pem'),
    keyFile: join(dir, 'server-key.pem'),
  };
  mkdirSync(dir, { recursive: true });
  const caKept = existsSync(files.caFile) && existsSync(files.caKeyFile);
  const ca = caKept
    ? loadCertificateAuthority(readFileSync(files.caFile, 'utf8'), readFileSync(files.caKeyFile, 'utf8'))
    : createCertificateAuthority('bank-sandbox Inter development CA', CA_DAYS);
  if (!caKept) {
    writeFileSync(files.caKeyFile, ca.keyPem, { mode: 0o600 });
    writeFileSync(files.caFile, ca.certPem);
  }
  if (!caKept || !existsSync(files.certFile) || !existsSync(files.keyFile)) {
    const server = ca.issue({
      commonName: 'bank-sandbox inter',
      kind: 'server',
      altNames: ['localhost', '127.0.0.1'],
      validDays: SERVER_DAYS,
    });
    writeFileSync(files.keyFile, server.keyPem, { mode: 0o600 });
    writeFileSync(files.certFile, server.certPem);
  }
  return files;
}
