import { sql, type Kysely, type Migration } from 'kysely';
import type { ServiceScope } from '@payments/lifecycle';
import { assertIdentifier, createDatabase, type DatabaseOptions } from './database';
import { databaseNameOf, DatabaseUnavailableError, displayDatabaseUrl, explainConnectionError } from './unavailable';

/**
 * Each service connects as its own Postgres role, `<schema>_svc`, which owns its schema and whose
 * search_path and timeouts are role settings in the database (`ALTER ROLE ... IN DATABASE ... SET`),
 * written by `npm run migrate`. A pooler in transaction mode (PgBouncer) drops connection startup
 * options and hands each transaction any server connection: role settings are the only per-service
 * session settings that survive it, because Postgres applies them at every login. See
 * docs/architecture.md "Database roles and migrations".
 */
export function serviceRoleName(schema: string): string {
  assertIdentifier(schema);
  const role = `${schema}_svc`;
  assertIdentifier(role);
  return role;
}

/**
 * The URL with its user replaced by the service's role and no password: for launchers in development
 * and tests, where Postgres trusts local logins. A deployment gives each app its own URL instead.
 */
export function serviceDatabaseUrl(url: string, schema: string): string {
  const parsed = new URL(url);
  const role = serviceRoleName(schema);
  if (decodeURIComponent(parsed.username) === role) return url;
  parsed.username = role;
  parsed.password = '';
  return parsed.toString();
}

/** Session settings of a service's role, applied by Postgres at each login of the role in the database. */
export interface RoleSettings {
  /**
   * statement_timeout. 30 s: far above any request's own deadline (the gateway answers in seconds, a
   * worker's query is one page of a queue), so only a runaway query (a missing index, a plan gone
   * wrong, a lock held by a vanished peer) reaches it, and it then frees its connection instead of
   * holding one of the pool's few for minutes.
   */
  statementTimeoutMs: number;
  /**
   * idle_in_transaction_session_timeout. 60 s: a process that stalls (or vanished behind a pooler)
   * with a transaction open holds its row locks and keeps vacuum from cleaning; Postgres ends it.
   */
  idleInTransactionSessionTimeoutMs: number;
  /** lock_timeout. 10 s: a query waiting on a lock longer fails and its caller retries, rather than queueing every writer behind it. */
  lockTimeoutMs: number;
}

export const DEFAULT_ROLE_SETTINGS: RoleSettings = {
  statementTimeoutMs: 30_000,
  idleInTransactionSessionTimeoutMs: 60_000,
  lockTimeoutMs: 10_000,
};

/** A connection's query, with parameters (a pg client, or a Kysely connection through sqlClient). */
export interface SqlClient {
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/** duplicate_object (the role exists) and unique_violation (two CREATE ROLE at once): another run made it. */
const ROLE_RACE_CODES = new Set(['42710', '23505']);

/**
 * Creates the service's role (LOGIN, no password: a deployment sets one) when missing. Roles are
 * cluster-wide: parallel tests on other databases create the same one at the same moment.
 * A migration user that is not a superuser (CREATEROLE) is granted the role, which lets it act as
 * the role (SET ROLE) and give it ownership.
 */
export async function ensureServiceRole(client: SqlClient, schema: string): Promise<string> {
  const role = serviceRoleName(schema);
  const found = await client.query('select 1 from pg_roles where rolname = $1', [role]);
  if (found.rows.length === 0) {
    await client.query(`create role ${role} login`).catch((err: { code?: string }) => {
      if (!err.code || !ROLE_RACE_CODES.has(err.code)) throw err;
    });
  }
  const me = await client.query<{ superuser: boolean; member: boolean }>(
    `select rolsuper as superuser, pg_has_role(current_user, $1, 'member') as member
     from pg_roles where rolname = current_user`,
    [role],
  );
  const row = me.rows[0];
  if (row && !row.superuser && !row.member) await client.query(`grant ${role} to current_user`);
  return role;
}

/** Search path and timeouts of the role in this database; Postgres applies them at the role's next logins. */
export async function applyRoleSettings(client: SqlClient, schema: string, settings: RoleSettings): Promise<void> {
  const role = serviceRoleName(schema);
  const database = (await client.query<{ db: string }>('select current_database() as db')).rows[0]?.db ?? '';
  assertIdentifier(database);
  const set = (name: string, value: string) =>
    client.query(`alter role ${role} in database ${database} set ${name} = ${value}`);
  await set('search_path', schema);
  await set('statement_timeout', String(Math.trunc(settings.statementTimeoutMs)));
  await set('idle_in_transaction_session_timeout', String(Math.trunc(settings.idleInTransactionSessionTimeoutMs)));
  await set('lock_timeout', String(Math.trunc(settings.lockTimeoutMs)));
}

/**
 * Makes the role owner of the schema and of everything in it that it does not own yet (databases
 * made before roles have objects owned by the migration user). Indexes and sequences of a column go
 * with their table. Idempotent: a second run finds nothing to change.
 */
export async function giveSchemaToRole(client: SqlClient, schema: string): Promise<void> {
  const role = serviceRoleName(schema);
  await client.query(`alter schema ${schema} owner to ${role}`);
  const owned = await client.query<{ statement: string }>(
    `select format('alter %s %I.%I owner to %I',
              case c.relkind when 'S' then 'sequence' when 'v' then 'view' when 'm' then 'materialized view'
                             when 'f' then 'foreign table' else 'table' end,
              n.nspname, c.relname, $2::text) as statement
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm', 'f', 'S')
        and c.relowner <> (select oid from pg_roles where rolname = $2)
        and not (c.relkind = 'S' and exists (
              select 1 from pg_depend d where d.objid = c.oid and d.classid = 'pg_class'::regclass
                 and d.refclassid = 'pg_class'::regclass and d.deptype in ('a', 'i')))
     union all
     select format('alter routine %I.%I(%s) owner to %I', n.nspname, p.proname,
                   pg_get_function_identity_arguments(p.oid), $2::text)
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = $1 and p.prokind in ('f', 'p') and p.proowner <> (select oid from pg_roles where rolname = $2)
     union all
     select format('alter type %I.%I owner to %I', n.nspname, t.typname, $2::text)
       from pg_type t join pg_namespace n on n.oid = t.typnamespace
      where n.nspname = $1 and t.typtype in ('e', 'd', 'r')
        and t.typowner <> (select oid from pg_roles where rolname = $2)`,
    [schema, role],
  );
  for (const { statement } of owned.rows) await client.query(statement);
}

/** The app is connected as a role whose search_path is not its schema: not its own role, or never migrated. */
export class ServiceRoleError extends Error {
  override readonly name = 'ServiceRoleError';
  readonly startupProblem = true;
  readonly problem = 'wrong_database_role';
}

/** The schema lacks migrations this code needs. */
export class SchemaNotMigratedError extends Error {
  override readonly name = 'SchemaNotMigratedError';
  readonly startupProblem = true;
  readonly problem = 'not_migrated';

  constructor(
    readonly schema: string,
    readonly missing: string[],
  ) {
    super(`schema ${schema} is not migrated (missing: ${missing.join(', ')}): run npm run migrate`);
  }
}

/**
 * An app's check at start, on its own pool: connected as a role whose search_path is the service's
 * schema, and every migration this code knows applied. A schema ahead of this code (a newer release
 * migrated it: rolling upgrade, rollback) is fine; `aheadBy` names the newer migrations.
 */
export async function assertServiceSchema<DB>(
  database: Kysely<DB>,
  schema: string,
  migrations: Record<string, Migration>,
): Promise<{ aheadBy: string[] }> {
  const role = serviceRoleName(schema);
  const db = database as unknown as Kysely<unknown>;
  const session = await sql<{ user: string; path: string }>`
    select current_user as "user", current_setting('search_path') as path`.execute(db);
  const { user, path } = session.rows[0] ?? { user: '?', path: '' };
  if (path.replace(/"/g, '').trim() !== schema) {
    throw new ServiceRoleError(
      `connected to PostgreSQL as role ${user}, whose search_path is "${path}", not "${schema}": connect as role ${role} (the user in DATABASE_URL) and run npm run migrate`,
    );
  }
  const applied = await appliedMigrationNames(db, schema);
  const missing = Object.keys(migrations).filter((name) => !applied.includes(name));
  const aheadBy = applied.filter((name) => !(name in migrations));
  if (missing.length > 0) throw new SchemaNotMigratedError(schema, missing);
  return { aheadBy };
}

/** Names of the migrations applied to the schema (Kysely's kysely_migration table); none before the first. */
export async function appliedMigrationNames(db: Kysely<unknown>, schema: string): Promise<string[]> {
  assertIdentifier(schema);
  const table = await sql<{
    found: string | null;
  }>`select to_regclass(${`${schema}.kysely_migration`})::text as found`.execute(db);
  if (!table.rows[0]?.found) return [];
  const applied = await sql<{
    name: string;
  }>`select name from ${sql.table(`${schema}.kysely_migration`)} order by name`.execute(db);
  return applied.rows.map((r) => r.name);
}

/**
 * An app's pool on its own schema, checked at start (assertServiceSchema): Postgres out of reach, a
 * refused login, a missing database, the wrong role or a schema not migrated fail with one line
 * saying what to do (the pool closed). A schema ahead of this code is logged and used.
 */
export async function openServiceDatabase<DB>(
  opts: DatabaseOptions & {
    migrations: Record<string, Migration>;
    logger?: { warn(details: object, message: string): void };
  },
): Promise<Kysely<DB>> {
  const db = createDatabase<DB>(opts);
  try {
    const { aheadBy } = await assertServiceSchema(db, opts.schema, opts.migrations).catch((err: unknown) => {
      throw notMigratedWhenMissing(explainConnectionError(err, opts.url), opts.url);
    });
    if (aheadBy.length > 0)
      opts.logger?.warn({ schema: opts.schema, aheadBy }, 'schema migrated by a newer version: running on it as it is');
    return db;
  } catch (err) {
    await db.destroy().catch(() => undefined);
    throw err;
  }
}

/** `openServiceDatabase`, opened in a service's scope and destroyed with it. */
export function openServiceDatabaseIn<DB>(
  scope: ServiceScope,
  opts: Parameters<typeof openServiceDatabase>[0],
): Promise<Kysely<DB>> {
  return scope.open(
    'database',
    () => openServiceDatabase<DB>(opts),
    (db) => db.destroy(),
  );
}

/** A database that does not exist yet is made by `npm run migrate`, as its schema is. */
function notMigratedWhenMissing(err: unknown, url: string): unknown {
  if (!(err instanceof DatabaseUnavailableError) || err.problem !== 'missing') return err;
  return new DatabaseUnavailableError(
    'missing',
    `database "${databaseNameOf(url)}" does not exist at ${displayDatabaseUrl(url)}: run npm run migrate`,
    err.url,
    { cause: err },
  );
}
