import { loadCommonConfig } from './common';
import { envInt, envString } from './env';

/** `npm run migrate`: where it connects and the session settings it writes on every service's role. */
export interface MigrateConfig {
  /**
   * MIGRATION_DATABASE_URL: a direct connection (never through a pooler) as a user that may create
   * the database and roles and own what the roles own (in development, postgres). Default: DATABASE_URL.
   */
  migrationDatabaseUrl: string;
  /** DATABASE_STATEMENT_TIMEOUT_MS: statement_timeout of every service's role. */
  statementTimeoutMs: number;
  /** DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: idle_in_transaction_session_timeout of every service's role. */
  idleInTransactionSessionTimeoutMs: number;
  /** DATABASE_LOCK_TIMEOUT_MS: lock_timeout of every service's role. */
  lockTimeoutMs: number;
}

export function loadMigrateConfig(env: Record<string, string | undefined> = process.env): MigrateConfig {
  return {
    migrationDatabaseUrl: envString('MIGRATION_DATABASE_URL', loadCommonConfig(env).databaseUrl, env),
    statementTimeoutMs: envInt('DATABASE_STATEMENT_TIMEOUT_MS', 30_000, env, 1),
    idleInTransactionSessionTimeoutMs: envInt('DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 60_000, env, 1),
    lockTimeoutMs: envInt('DATABASE_LOCK_TIMEOUT_MS', 10_000, env, 1),
  };
}
