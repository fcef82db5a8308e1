import {
  ConfigError,
  busCredentialChecks,
  envInt,
  envIntList,
  envOptional,
  loadCommonConfig,
  requireProductionSecrets,
  type CommonConfig,
  databaseCredentialChecks,
} from '@payments/config';
import { parseDnsServers } from '@payments/host-resolver';
import { DEFAULT_TENANT_SHARE_PERCENT } from './domain/delivery-engine';
import { DEFAULT_SCHEDULE_MS } from './domain/retry-policy';
import { DEFAULT_RETENTION_DAYS } from './db/log-tables';

/** DATABASE_POOL_SIZE unless set, twice the others': claims and the attempts of up to CALLBACK_CONCURRENCY deliveries share it. */
export const DATABASE_POOL_SIZE_DEFAULT = 20;

/** callback-svc's settings: each field is the variable of the same name (docs/configuration.md). */
export interface CallbackConfig extends CommonConfig {
  /** CALLBACK_PORT: ops HTTP port (/healthz, /readyz, /metrics); 0 = any free port (tests). */
  port: number;
  retryScheduleMs: number[];
  retryJitterPercent: number;
  timeoutMs: number;
  concurrency: number;
  hostConcurrency: number;
  tenantSharePercent: number;
  maxHeld: number;
  maxHeldPerHost: number;
  pollIntervalMs: number;
  leaseMs: number;
  /** DNS_SERVERS: nameservers for receivers' host names; empty: the system's. */
  dnsServers: string[];
  /** CALLBACK_RETENTION_DAYS: days the log keeps delivered callbacks and attempts (whole days, by partition). */
  retentionDays: number;
}

export function loadCallbackConfig(env: Record<string, string | undefined> = process.env): CallbackConfig {
  const common = loadCommonConfig(env, { databasePoolSize: DATABASE_POOL_SIZE_DEFAULT });
  requireProductionSecrets(common.nodeEnv, [...busCredentialChecks(common), ...databaseCredentialChecks(common)]);
  const timeoutMs = envInt('CALLBACK_TIMEOUT_MS', 10_000, env, 1);
  const tenantSharePercent = envInt('CALLBACK_TENANT_SHARE_PERCENT', DEFAULT_TENANT_SHARE_PERCENT, env, 1);
  if (tenantSharePercent > 100)
    throw new ConfigError(`CALLBACK_TENANT_SHARE_PERCENT must be at most 100, got "${tenantSharePercent}"`);
  return {
    ...common,
    port: envInt('CALLBACK_PORT', 3400, env),
    retryScheduleMs: envIntList('CALLBACK_RETRY_SCHEDULE_MS', DEFAULT_SCHEDULE_MS, env),
    retryJitterPercent: envInt('CALLBACK_RETRY_JITTER_PERCENT', 20, env),
    timeoutMs,
    concurrency: envInt('CALLBACK_CONCURRENCY', 256, env, 1),
    hostConcurrency: envInt('CALLBACK_HOST_CONCURRENCY', 32, env, 1),
    // One tenant's share of the slots and of the hold: its hanging receivers cannot starve the others.
    tenantSharePercent,
    // Claimed events held in memory, waiting for a slot: a backlog is claimed once, not per few deliveries.
    maxHeld: envInt('CALLBACK_MAX_HELD', 20_000, env, 1),
    maxHeldPerHost: envInt('CALLBACK_MAX_HELD_PER_HOST', 10_000, env, 1),
    pollIntervalMs: envInt('CALLBACK_POLL_INTERVAL_MS', 500, env, 10),
    // The worker lease, renewed every quarter of it: a killed worker's callbacks are taken over 10 s
    // after its last heartbeat (within 15 s). Shorter means more heartbeats, and a stall of
    // that long (a GC pause, a Postgres failover) costs the worker its claims.
    leaseMs: envInt('CALLBACK_LEASE_MS', 10_000, env, 400),
    dnsServers: dnsServers(env),
    retentionDays: envInt('CALLBACK_RETENTION_DAYS', DEFAULT_RETENTION_DAYS, env, 1),
  };
}

function dnsServers(env: Record<string, string | undefined>): string[] {
  try {
    return parseDnsServers(envOptional('DNS_SERVERS', env) ?? '');
  } catch (err) {
    throw new ConfigError(`DNS_SERVERS: ${(err as Error).message}`);
  }
}
