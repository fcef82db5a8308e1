/**
 * `npm run migrate`: every service's schema migrated, as its own role, through MIGRATION_DATABASE_URL
 * (a direct connection; default DATABASE_URL). Exported for the launchers and tests that migrate
 * before they start apps (e2e, the previous-release test), which would otherwise spawn the CLI.
 */
import type { Migration } from 'kysely';
import { loadMigrateConfig, runMode } from '@payments/config';
import { keyringFromEnv } from '@payments/credential-seal';
import {
  describeMigrateResult,
  migrateService,
  serviceDatabaseUrl,
  type MigrateServiceResult,
  type OnlineIndex,
} from '@payments/db';
import * as bankSandbox from '@payments/bank-sandbox/src/db/migrations';
import * as booklets from '@payments/booklet-svc/src/db/migrations';
import * as callbacks from '@payments/callback-svc/src/db/migrations';
import * as clients from '@payments/clients-svc/src/db/migrations';
import * as gateway from '@payments/gateway/src/db/migrations';
import * as receivables from '@payments/receivables-svc/src/db/migrations';

type Env = Record<string, string | undefined>;

export interface ServiceSchema {
  /** The app (apps/<app>), whose DATABASE_URL logs in as `<schema>_svc`. */
  app: string;
  schema: string;
  migrations: Record<string, Migration>;
  onlineIndexes: readonly OnlineIndex[];
}

/** Each app with a database and its schema (the console has none). */
export const APP_SCHEMAS: Readonly<Record<string, string>> = {
  gateway: gateway.SCHEMA,
  'clients-svc': clients.SCHEMA,
  'receivables-svc': receivables.SCHEMA,
  'booklet-svc': booklets.SCHEMA,
  'callback-svc': callbacks.SCHEMA,
  'bank-sandbox': bankSandbox.SCHEMA,
};

/**
 * The URL an app logs in with in development and tests: `url`'s user replaced by the app's role.
 * An app without a database gets `url` back.
 */
export function appDatabaseUrl(app: string, url: string): string {
  const schema = APP_SCHEMAS[app];
  return schema ? serviceDatabaseUrl(url, schema) : url;
}

/** Every service with a database schema, with its migrations as this code has them. */
export function serviceSchemas(env: Env = process.env): ServiceSchema[] {
  // The gateway's 0004 seals signing secrets stored in clear with the gateway's key. Without
  // CREDENTIALS_ENCRYPTION_KEY in production, none: that migration then refuses a database that has
  // some to seal, and passes a fresh one.
  const mode = runMode(env);
  const gatewayKeyring =
    env.CREDENTIALS_ENCRYPTION_KEY || mode === 'development' ? keyringFromEnv(env, mode) : undefined;
  return [
    {
      app: 'gateway',
      schema: gateway.SCHEMA,
      migrations: gateway.gatewayMigrations(gatewayKeyring),
      onlineIndexes: [],
    },
    { app: 'clients-svc', schema: clients.SCHEMA, migrations: clients.migrations, onlineIndexes: [] },
    {
      app: 'receivables-svc',
      schema: receivables.SCHEMA,
      migrations: receivables.migrations,
      onlineIndexes: receivables.onlineIndexes,
    },
    { app: 'booklet-svc', schema: booklets.SCHEMA, migrations: booklets.migrations, onlineIndexes: [] },
    {
      app: 'callback-svc',
      schema: callbacks.SCHEMA,
      migrations: callbacks.migrations,
      onlineIndexes: callbacks.onlineIndexes,
    },
    { app: 'bank-sandbox', schema: bankSandbox.SCHEMA, migrations: bankSandbox.migrations, onlineIndexes: [] },
  ];
}

export interface MigrateAllOptions {
  /** Told each schema's one line as it is done. */
  onResult?: (line: string, result: MigrateServiceResult) => void;
}

/**
 * Creates the database if missing, then migrates every schema at once (each takes its own lock, so
 * schemas do not wait for each other). Settings from `env` (MIGRATION_DATABASE_URL, the role timeouts).
 */
export async function migrateAll(
  env: Env = process.env,
  opts: MigrateAllOptions = {},
): Promise<MigrateServiceResult[]> {
  const config = loadMigrateConfig(env);
  const services = serviceSchemas(env);
  const settings = {
    statementTimeoutMs: config.statementTimeoutMs,
    idleInTransactionSessionTimeoutMs: config.idleInTransactionSessionTimeoutMs,
    lockTimeoutMs: config.lockTimeoutMs,
  };
  return Promise.all(
    services.map(async (service) => {
      const result = await migrateService({ url: config.migrationDatabaseUrl, settings, ...service });
      opts.onResult?.(describeMigrateResult(result), result);
      return result;
    }),
  );
}
