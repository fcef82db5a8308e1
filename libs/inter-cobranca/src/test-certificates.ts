/**
 * Throwaway certificates for tests of mutual TLS: now in @payments/dev-certificates (the bank sandbox
 * makes its development CA with it at run time); kept here under the old names for existing tests.
 */
export {
  createCertificateAuthority as createTestCertificateAuthority,
  writeSandboxInterTls,
  type CertificateAuthority as TestCertificateAuthority,
  type IssuedCertificate as TestCertificate,
  type IssueOptions,
} from '@payments/dev-certificates';
