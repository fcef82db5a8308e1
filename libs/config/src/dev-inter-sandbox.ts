/**
 * Where, in development, the bank sandbox's Inter dialect keeps the CA and certificates it creates on
 * its first start, and where receivables-svc finds that CA and the dialect by default (relative to the
 * working directory of `npm start`, the repository root; `.data/` is not committed).
 */
export const DEV_INTER_SANDBOX_DIR = '.data/bank-sandbox-inter';

/** The development CA's certificate: the sandbox signs its server and integration certificates with it. */
export const DEV_INTER_SANDBOX_CA_FILE = `${DEV_INTER_SANDBOX_DIR}/ca.pem`;

/** BANK_SANDBOX_INTER_PORT's default: the Inter dialect's mutual-TLS listener. */
export const DEV_INTER_SANDBOX_PORT = 3101;

/** The dialect's API root as an Inter account (or INTER_BASE_URL) names it. */
export function devInterSandboxBaseUrl(port: number = DEV_INTER_SANDBOX_PORT): string {
  return `https://127.0.0.1:${port}/inter`;
}
