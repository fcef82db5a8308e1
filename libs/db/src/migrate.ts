import { CompiledQuery, Kysely, PostgresDialect, sql, type Migration } from 'kysely';
import pg from 'pg';
import { assertIdentifier, ensureDatabase } from './database';
import { ensureOnlineIndexesOnce, type OnlineIndex, type OnlineIndexLogger } from './online-indexes';
import {
  applyRoleSettings,
  appliedMigrationNames,
  DEFAULT_ROLE_SETTINGS,
  ensureServiceRole,
  giveSchemaToRole,
  serviceDatabaseUrl,
  serviceRoleName,
  type RoleSettings,
  type SqlClient,
} from './roles';
import { createTestDatabase } from './test-database';
import { explainConnectionError } from './unavailable';

/** The schema holds migrations this code does not know, and lacks some it knows: no order fixes that. */
export class MigrationsDivergedError extends Error {
  override readonly name = 'MigrationsDivergedError';
  readonly startupProblem = true;
  readonly problem = 'migrations_diverged';

  constructor(schema: string, unknown: string[], missing: string[]) {
    super(
      `schema ${schema} has migrations this version does not know (${unknown.join(', ')}) and lacks some it needs (${missing.join(', ')})`,
    );
  }
}

/** A migration failed (its transaction rolled back: the schema is as before it). */
export class MigrationFailedError extends Error {
  override readonly name = 'MigrationFailedError';

  constructor(
    readonly schema: string,
    readonly migration: string,
    options: { cause: unknown },
  ) {
    super(`migration of schema ${schema} failed at ${migration}: ${String(options.cause)}`, options);
  }
}

/**
 * How long one migration waits for a table's lock before it gives up, rolls back and tries again.
 * While it waits, every query on that table queues behind it (Postgres grants locks in order): a few
 * seconds of stalled writers at worst, instead of as long as the longest transaction in the way.
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 5_000;

/** Tries per migration before a busy table fails the run: about two minutes with the backoff below. */
export const MIGRATION_LOCK_ATTEMPTS = 10;

const LOCK_NOT_AVAILABLE = '55P03';

export interface MigrationLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface RunMigrationsOptions {
  /** Role the migrations run as (SET LOCAL ROLE), so it owns what they create. */
  role?: string;
  lockTimeoutMs?: number;
  lockAttempts?: number;
  /** First wait after a lock timeout; it doubles (with jitter) up to 10 s. */
  retryDelayMs?: number;
  logger?: MigrationLogger;
}

/** What a run did: migrations it applied, or those a newer release applied that this code does not know. */
export interface MigrationRun {
  applied: string[];
  aheadBy: string[];
}

/**
 * Applies the pending migrations of `schema`, ordered by name, each in its own transaction that
 * takes the schema's transaction-scoped advisory lock (so runs at once apply each migration once, and
 * runs for other schemas go on in parallel), sets a lock_timeout, and retries with backoff when a
 * table stayed locked. Records them in `<schema>.kysely_migration`, Kysely's table, which databases
 * migrated by earlier releases (through Kysely's Migrator) already have.
 *
 * A schema already ahead of this code (a newer version migrated it: a rolling upgrade under way, or
 * a rollback) is left as it is; migrations are written expand-then-contract, so the previous version
 * runs on the newer schema. A schema with unknown migrations that also lacks known ones throws
 * MigrationsDivergedError.
 */
export async function runMigrations(
  database: Kysely<unknown>,
  schema: string,
  migrations: Record<string, Migration>,
  opts: RunMigrationsOptions = {},
): Promise<MigrationRun> {
  assertIdentifier(schema);
  const db = database;
  await prepareSchema(db, schema, opts.role);
  const names = Object.keys(migrations).sort();
  const initial = await appliedMigrationNames(db, schema);
  const aheadBy = initial.filter((name) => !(name in migrations));
  const missing = names.filter((name) => !initial.includes(name));
  if (aheadBy.length > 0) {
    if (missing.length > 0) throw new MigrationsDivergedError(schema, aheadBy, missing);
    opts.logger?.warn({ schema, aheadBy }, 'schema migrated by a newer version: left as it is');
    return { applied: [], aheadBy };
  }
  const applied: string[] = [];
  for (const name of missing) {
    const migration = migrations[name];
    if (!migration) continue;
    if (await applyOne(db, schema, name, migration, opts)) applied.push(name);
  }
  return { applied, aheadBy: [] };
}

/**
 * Creates the schema and Kysely's two bookkeeping tables, as an earlier release's Migrator did. With
 * a role, gives it the schema and what is in it first (earlier releases migrated as the connecting
 * user), so that the migrations, run as the role, may alter those tables.
 */
async function prepareSchema(db: Kysely<unknown>, schema: string, role: string | undefined): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockSchema(trx, schema);
    await sql`select set_config('lock_timeout', ${String(MIGRATION_LOCK_TIMEOUT_MS)}, true)`.execute(trx);
    await sql.raw(`create schema if not exists ${schema}`).execute(trx);
    if (role) {
      await giveSchemaToRole(sqlClient(trx), schema);
      await sql.raw(`set local role ${role}`).execute(trx);
    }
    await sql
      .raw(
        `create table if not exists ${schema}.kysely_migration (name varchar(255) not null primary key, timestamp varchar(255) not null)`,
      )
      .execute(trx);
    await sql
      .raw(
        `create table if not exists ${schema}.kysely_migration_lock (id varchar(255) not null primary key, is_locked integer not null default 0)`,
      )
      .execute(trx);
    await sql
      .raw(
        `insert into ${schema}.kysely_migration_lock (id, is_locked) values ('migration_lock', 0) on conflict do nothing`,
      )
      .execute(trx);
  });
}

/** Applies one migration unless another run did meanwhile; true when this call applied it. */
async function applyOne(
  db: Kysely<unknown>,
  schema: string,
  name: string,
  migration: Migration,
  opts: RunMigrationsOptions,
): Promise<boolean> {
  const attempts = opts.lockAttempts ?? MIGRATION_LOCK_ATTEMPTS;
  let delay = opts.retryDelayMs ?? 500;
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        await lockSchema(trx, schema);
        const done = await sql<{ found: number }>`select 1 as found from ${sql.table(
          `${schema}.kysely_migration`,
        )} where name = ${name}`.execute(trx);
        if (done.rows.length > 0) return false;
        // The migration user's own timeouts, if any, must not cut a long migration short: only the lock wait is bounded.
        await sql`select set_config('statement_timeout', '0', true)`.execute(trx);
        await sql`select set_config('lock_timeout', ${String(opts.lockTimeoutMs ?? MIGRATION_LOCK_TIMEOUT_MS)}, true)`.execute(
          trx,
        );
        await sql.raw(`set local search_path = ${schema}`).execute(trx);
        if (opts.role) await sql.raw(`set local role ${opts.role}`).execute(trx);
        await migration.up(trx);
        await sql`insert into ${sql.table(`${schema}.kysely_migration`)} (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
          trx,
        );
        return true;
      });
    } catch (err) {
      if (lockNotAvailable(err) && attempt < attempts) {
        opts.logger?.warn(
          { schema, migration: name, attempt, retryInMs: delay },
          'migration: a table stayed locked past lock_timeout; rolled back, trying again',
        );
        await new Promise((resolve) => setTimeout(resolve, delay * (0.75 + Math.random() / 2)));
        delay = Math.min(delay * 2, 10_000);
        continue;
      }
      throw new MigrationFailedError(schema, name, { cause: err });
    }
  }
}

function lockNotAvailable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === LOCK_NOT_AVAILABLE;
}

/**
 * Creates the role if missing and writes its settings in this database. Two runs writing the same
 * role's settings in one database at once would fail ("tuple concurrently updated"): serialised.
 */
async function setUpRole(db: Kysely<unknown>, schema: string, settings: RoleSettings): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const client = sqlClient(trx);
    await lockRoleSettings(trx, serviceRoleName(schema));
    await ensureServiceRole(client, schema);
    await applyRoleSettings(client, schema, settings);
  });
}

async function lockRoleSettings(trx: Kysely<unknown>, role: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`role-settings:${role}`}))`.execute(trx);
}

/** One lock per schema, held to the end of the transaction: never a session lock (none survive a pooler). */
async function lockSchema(trx: Kysely<unknown>, schema: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`migrate:${schema}`}))`.execute(trx);
}

export interface MigrateServiceOptions {
  /** A direct connection (MIGRATION_DATABASE_URL), as a user that may create roles and databases. */
  url: string;
  schema: string;
  migrations: Record<string, Migration>;
  /** Built after the migrations (CREATE INDEX CONCURRENTLY: writes go on meanwhile). */
  onlineIndexes?: readonly OnlineIndex[];
  /** The role's session settings (defaults: DEFAULT_ROLE_SETTINGS). */
  settings?: Partial<RoleSettings>;
  lockTimeoutMs?: number;
  lockAttempts?: number;
  retryDelayMs?: number;
  logger?: MigrationLogger & OnlineIndexLogger;
}

export interface MigrateServiceResult extends MigrationRun {
  schema: string;
  role: string;
  /** Online indexes this run built. */
  indexesBuilt: string[];
}

/**
 * `npm run migrate` for one service: creates the database if missing, the role `<schema>_svc`,
 * gives it the schema and everything in it, writes its search_path and timeouts as role settings in
 * the database, applies the pending migrations as that role (runMigrations), then builds the
 * missing online indexes. Idempotent; runs for different schemas may go on at once.
 */
export async function migrateService(opts: MigrateServiceOptions): Promise<MigrateServiceResult> {
  const { url, schema } = opts;
  const role = serviceRoleName(schema);
  await ensureDatabase(url);
  const db = migrationConnection(url, schema);
  try {
    await setUpRole(db, schema, { ...DEFAULT_ROLE_SETTINGS, ...opts.settings }).catch((err: unknown) => {
      throw explainConnectionError(err, url);
    });
    const run = await runMigrations(db, schema, opts.migrations, { ...opts, role });
    const indexesBuilt = await buildOnlineIndexes(db, schema, opts.onlineIndexes ?? [], opts.logger);
    return { schema, role, ...run, indexesBuilt };
  } finally {
    await db.destroy();
  }
}

/** One line per schema for `npm run migrate`. */
export function describeMigrateResult(result: MigrateServiceResult): string {
  const indexes = result.indexesBuilt.length > 0 ? `; built ${result.indexesBuilt.join(', ')}` : '';
  if (result.aheadBy.length > 0)
    return `${result.schema}: ahead of this code (${result.aheadBy.join(', ')}), left as it is${indexes}`;
  if (result.applied.length > 0) return `${result.schema}: applied ${result.applied.join(', ')}${indexes}`;
  return `${result.schema}: up to date${indexes}`;
}

/**
 * The migration step's own pool of one direct connection, whose session searches the schema (the
 * online index definitions name tables unqualified). Session settings are fine here: no pooler.
 */
function migrationConnection(url: string, schema: string): Kysely<unknown> {
  const pool = new pg.Pool({ connectionString: url, max: 1, application_name: `migrate ${schema}` });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  return new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
}

/** A Kysely connection or transaction as the role statements' client. */
function sqlClient(conn: Kysely<unknown>): SqlClient {
  return {
    async query<R>(text: string, values: unknown[] = []) {
      const result = await conn.executeQuery<R>(CompiledQuery.raw(text, values));
      return { rows: result.rows };
    },
  };
}

/** Builds what is missing; waits while another run builds them. */
async function buildOnlineIndexes(
  db: Kysely<unknown>,
  schema: string,
  defs: readonly OnlineIndex[],
  logger: OnlineIndexLogger | undefined,
): Promise<string[]> {
  if (defs.length === 0) return [];
  const quiet: OnlineIndexLogger = logger ?? { info: () => undefined, warn: () => undefined, error: () => undefined };
  await sql.raw(`set search_path = ${schema}`).execute(db);
  await sql`set statement_timeout = 0`.execute(db);
  for (;;) {
    const outcome = await ensureOnlineIndexesOnce(db, schema, defs, quiet);
    if (outcome.status === 'done') return outcome.built;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/**
 * Migrates `schema` through an open pool, for tests and tools that own a database and connect to it
 * as one user (a superuser, in development): runMigrations as the role `<schema>_svc`, and the
 * connecting user's search_path in this database set to the schema, as the role's is, so the pool
 * finds the tables unqualified (the connection at hand too). Services never call it: they run on
 * `npm run migrate` (migrateService) and check with assertServiceSchema.
 */
export async function migrateToLatest<DB>(
  database: Kysely<DB>,
  schema: string,
  migrations: Record<string, Migration>,
  logger?: MigrationLogger,
): Promise<{ aheadBy: string[] }> {
  const db = database as unknown as Kysely<unknown>;
  const role = serviceRoleName(schema);
  await setUpRole(db, schema, DEFAULT_ROLE_SETTINGS);
  const run = await runMigrations(db, schema, migrations, { role, logger });
  await db.connection().execute(async (conn) => {
    await conn.transaction().execute(async (trx) => {
      await lockRoleSettings(trx, 'current_user');
      const current = await sql<{ db: string }>`select current_database() as db`.execute(trx);
      const name = current.rows[0]?.db ?? '';
      assertIdentifier(name);
      await sql.raw(`alter role current_user in database ${name} set search_path = ${schema}`).execute(trx);
    });
    await sql.raw(`set search_path = ${schema}`).execute(conn);
  });
  return { aheadBy: run.aheadBy };
}

/**
 * For tests that start an app on a throw-away database: one made by createTestDatabase, migrated as
 * `npm run migrate` does. `url` logs in as the service's role (what the app is given), `adminUrl` as
 * the server's superuser (to look at or break things from outside).
 */
export async function createMigratedTestDatabase(
  schema: string,
  migrations: Record<string, Migration>,
  opts: { onlineIndexes?: readonly OnlineIndex[]; baseUrl?: string } = {},
): Promise<{ url: string; adminUrl: string; drop: () => Promise<void> }> {
  const database = await createTestDatabase(opts.baseUrl);
  try {
    await migrateService({ url: database.url, schema, migrations, onlineIndexes: opts.onlineIndexes });
  } catch (err) {
    await database.drop().catch(() => undefined);
    throw err;
  }
  return { url: serviceDatabaseUrl(database.url, schema), adminUrl: database.url, drop: database.drop };
}
