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
  /**
   * DATABASE_POOL_SIZE: the most Postgres connections this instance's pool opens. Its default is the
   * app's (see CommonDefaults); docs/architecture.md sums them against max_connections.
   */
  databasePoolSize: number;
  /** NATS_URL: one server, or a cluster's servers separated by commas (any one up is enough to start). */
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
  /** BUS_SERVE_CONCURRENCY: request handlers a service runs at once; a few more wait, the rest get 503. */
  busServeConcurrency: number;
  /** JOB_MAX_FAILURES: a job message whose handler failed (threw) this often is dead-lettered. */
  jobMaxFailures: number;
  /** STREAM_MAX_BYTES: max_bytes of every JetStream stream; a full stream refuses publishes and the outbox waits. */
  streamMaxBytes: number;
  /**
   * STREAM_REPLICAS: JetStream replicas of every stream and object store the system creates (3 on a
   * 3-node cluster); an existing stream is brought to it at start.
   */
  streamReplicas: number;
  /** OUTBOX_MAX_ROWS: the outbox backlog to stay under (a gauge and, above 80%, a warning; nothing is refused). */
  outboxMaxRows: number;
}

/**
 * STREAM_MAX_BYTES unless set: 1 GiB in production; 64 MiB in development, where one NATS serves many
 * test prefixes and JetStream reserves every stream's max_bytes on disk (75% of the free disk in all).
 */
export const STREAM_MAX_BYTES_DEFAULT = { production: 1024 ** 3, development: 64 * 1024 ** 2 } as const;

/** DATABASE_POOL_SIZE unless set, for an app that names no default of its own. */
export const DATABASE_POOL_SIZE_DEFAULT = 10;

/** Defaults an app gives its common settings: one variable, a default per app (its load). */
export interface CommonDefaults {
  databasePoolSize?: number;
}

export function loadCommonConfig(
  env: Record<string, string | undefined> = process.env,
  defaults: CommonDefaults = {},
): CommonConfig {
  const nodeEnv = runMode(env);
  return {
    nodeEnv,
    databaseUrl: envString('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/receivables', env),
    databasePoolSize: envInt('DATABASE_POOL_SIZE', defaults.databasePoolSize ?? DATABASE_POOL_SIZE_DEFAULT, env, 1),
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
    busServeConcurrency: envInt('BUS_SERVE_CONCURRENCY', 64, env, 1),
    jobMaxFailures: envInt('JOB_MAX_FAILURES', 10, env, 1),
    streamMaxBytes: envInt('STREAM_MAX_BYTES', STREAM_MAX_BYTES_DEFAULT[nodeEnv], env, 1024),
    streamReplicas: envInt('STREAM_REPLICAS', 1, env, 1),
    outboxMaxRows: envInt('OUTBOX_MAX_ROWS', 100_000, env, 1),
  };
}

export type { ConfigError };
