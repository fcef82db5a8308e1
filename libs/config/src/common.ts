import { envInt, envOptional, envString, type ConfigError } from './env';
import { runMode, type RunMode } from './run-mode';

/**
 * Settings every service shares: where Postgres and NATS are, and how it runs. Each field is the
 * variable of the same name (NODE_ENV is nodeEnv); docs/configuration.md lists them all.
 */
export interface CommonConfig {
  /**
   * NODE_ENV: production unless `development` or `test` (see runMode). Production requires real secrets
   * and calls only public callback URLs.
   */
  nodeEnv: RunMode;
  databaseUrl: string;
  natsUrl: string;
  /** NATS_USER / NATS_PASSWORD: this service's own user on an authenticated bus (unset: no auth, development). */
  natsUser?: string;
  natsPassword?: string;
  /** NATS_CREDS: a creds file (JWT and nkey seed), instead of user and password. */
  natsCreds?: string;
  /** NATS_TLS_CA_FILE, NATS_TLS_CERT_FILE, NATS_TLS_KEY_FILE: TLS to NATS (a CA to trust; a client certificate). */
  natsTlsCaFile?: string;
  natsTlsCertFile?: string;
  natsTlsKeyFile?: string;
  /** Prefix of every NATS subject and stream of this deployment (lets test runs share a server). */
  busPrefix: string;
  /** How long a request over the bus waits for its reply. */
  busTimeoutMs: number;
  logLevel: string;
  /** How long SIGTERM waits for in-flight work before the process exits anyway. */
  shutdownGraceMs: number;
}

export function loadCommonConfig(env: Record<string, string | undefined> = process.env): CommonConfig {
  return {
    nodeEnv: runMode(env),
    databaseUrl: envString('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/receivables', env),
    natsUrl: envString('NATS_URL', 'nats://127.0.0.1:4222', env),
    natsUser: envOptional('NATS_USER', env),
    natsPassword: envOptional('NATS_PASSWORD', env),
    natsCreds: envOptional('NATS_CREDS', env),
    natsTlsCaFile: envOptional('NATS_TLS_CA_FILE', env),
    natsTlsCertFile: envOptional('NATS_TLS_CERT_FILE', env),
    natsTlsKeyFile: envOptional('NATS_TLS_KEY_FILE', env),
    busPrefix: envString('BUS_PREFIX', 'pay', env),
    busTimeoutMs: envInt('BUS_TIMEOUT_MS', 10_000, env, 1),
    logLevel: envString('LOG_LEVEL', 'info', env),
    shutdownGraceMs: envInt('SHUTDOWN_GRACE_MS', 15_000, env, 0),
  };
}

export type { ConfigError };
