import {
  ConfigError,
  DEV_INTER_SANDBOX_DIR,
  DEV_INTER_SANDBOX_PORT,
  envBool,
  envInt,
  envIntList,
  envOptional,
  type RunMode,
} from '@payments/config';

/** The files of the dialect's TLS: its server certificate and key, the CA client certificates must chain to, and (optionally) that CA's key. */
export interface InterTlsFiles {
  certFile: string;
  keyFile: string;
  caFile: string;
  /** Lets POST /sandbox/inter/integrations sign integration certificates; without it there are none. */
  caKeyFile: string | null;
}

/** Inter's own schedule for a notice its receiver refused: 4 retries, after 20, 30, 60 and 120 minutes. */
export const INTER_NOTICE_RETRY_MS = [20, 30, 60, 120].map((minutes) => minutes * 60_000);

/** The Inter dialect's listener and behaviour: BANK_SANDBOX_INTER_<NAME> (docs/configuration.md). */
export interface InterSandboxConfig {
  /** HTTPS port (mutual TLS); 0 = any free port (tests). */
  port: number;
  /** Given TLS files; null = none given (see devCaDir). */
  tls: InterTlsFiles | null;
  /**
   * With NODE_ENV=development and no TLS files: where the sandbox keeps the development CA and server
   * certificate it creates on its first start (DEV_INTER_SANDBOX_DIR). null = no dialect unless tls.
   */
  devCaDir: string | null;
  /** How long a new charge stays EM_PROCESSAMENTO before it is issued (0 = issued before the create answers). */
  issueDelayMs: number;
  /** Delays before each retry of a refused notice; its length is the number of retries. */
  noticeRetryMs: number[];
  noticeTimeoutMs: number;
  /** How often the bank's clock runs: issuing due charges, expiring, sending due notices. */
  pollMs: number;
  /** Answer 429 beyond Inter's production limits (120/min most endpoints, 5 webhook and token, 10 history). */
  enforceLimits: boolean;
  /** Accept http:// webhook URLs (Inter requires https://): true unless NODE_ENV is production. */
  httpWebhooks: boolean;
}

export function loadInterSandboxConfig(
  env: Record<string, string | undefined>,
  nodeEnv: RunMode = 'development',
): InterSandboxConfig {
  const certFile = envOptional('BANK_SANDBOX_INTER_TLS_CERT_FILE', env);
  const keyFile = envOptional('BANK_SANDBOX_INTER_TLS_KEY_FILE', env);
  const caFile = envOptional('BANK_SANDBOX_INTER_TLS_CA_FILE', env);
  const caKeyFile = envOptional('BANK_SANDBOX_INTER_TLS_CA_KEY_FILE', env) ?? null;
  const given = [certFile, keyFile, caFile].filter(Boolean).length;
  if (given !== 0 && given !== 3)
    throw new ConfigError(
      'BANK_SANDBOX_INTER_TLS_CERT_FILE, BANK_SANDBOX_INTER_TLS_KEY_FILE and BANK_SANDBOX_INTER_TLS_CA_FILE go together: set all three or none',
    );
  if (caKeyFile && given === 0)
    throw new ConfigError(
      'BANK_SANDBOX_INTER_TLS_CA_KEY_FILE goes with BANK_SANDBOX_INTER_TLS_CA_FILE (and its cert and key files)',
    );
  const tls = certFile && keyFile && caFile ? { certFile, keyFile, caFile, caKeyFile } : null;
  const noticeRetryMs = envIntList('BANK_SANDBOX_INTER_NOTICE_RETRY_MS', INTER_NOTICE_RETRY_MS, env);
  return {
    port: envInt('BANK_SANDBOX_INTER_PORT', DEV_INTER_SANDBOX_PORT, env),
    tls,
    // NODE_ENV=development exactly (npm start): under jest (NODE_ENV=test) a test starts what it needs.
    devCaDir: !tls && envOptional('NODE_ENV', env) === 'development' ? DEV_INTER_SANDBOX_DIR : null,
    issueDelayMs: envInt('BANK_SANDBOX_INTER_ISSUE_DELAY_MS', 0, env),
    noticeRetryMs,
    noticeTimeoutMs: envInt('BANK_SANDBOX_INTER_NOTICE_TIMEOUT_MS', 10_000, env, 1),
    pollMs: envInt('BANK_SANDBOX_INTER_POLL_MS', 250, env, 10),
    enforceLimits: envBool('BANK_SANDBOX_INTER_ENFORCE_LIMITS', false, env),
    httpWebhooks: envBool('BANK_SANDBOX_INTER_HTTP_WEBHOOKS', nodeEnv !== 'production', env),
  };
}

/** Whether the dialect runs: with TLS files, or in development with its own CA. */
export function interDialectEnabled(config: InterSandboxConfig): boolean {
  return config.tls !== null || config.devCaDir !== null;
}
