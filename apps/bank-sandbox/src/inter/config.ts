import { ConfigError, envInt, envOptional } from '@payments/config';

/** The Inter dialect's listener: BANK_SANDBOX_INTER_<NAME> (docs/configuration.md). */
export interface InterSandboxConfig {
  /** HTTPS port (mutual TLS); 0 = any free port (tests). */
  port: number;
  /** Server certificate, its key and the CA that client certificates must chain to; null = no Inter listener. */
  tls: { certFile: string; keyFile: string; caFile: string } | null;
  /** How long a new charge stays EM_PROCESSAMENTO before it is issued (0 = issued before the create answers). */
  issueDelayMs: number;
}

export function loadInterSandboxConfig(env: Record<string, string | undefined>): InterSandboxConfig {
  const certFile = envOptional('BANK_SANDBOX_INTER_TLS_CERT_FILE', env);
  const keyFile = envOptional('BANK_SANDBOX_INTER_TLS_KEY_FILE', env);
  const caFile = envOptional('BANK_SANDBOX_INTER_TLS_CA_FILE', env);
  const given = [certFile, keyFile, caFile].filter(Boolean).length;
  if (given !== 0 && given !== 3)
    throw new ConfigError(
      'BANK_SANDBOX_INTER_TLS_CERT_FILE, BANK_SANDBOX_INTER_TLS_KEY_FILE and BANK_SANDBOX_INTER_TLS_CA_FILE go together: set all three or none',
    );
  return {
    port: envInt('BANK_SANDBOX_INTER_PORT', 3101, env),
    tls: certFile && keyFile && caFile ? { certFile, keyFile, caFile } : null,
    issueDelayMs: envInt('BANK_SANDBOX_INTER_ISSUE_DELAY_MS', 0, env),
  };
}
