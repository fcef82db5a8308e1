import { sql, type Kysely } from 'kysely';
import { assertIdentifier } from './database';

/**
 * Log tables that grow with traffic are partitioned by RANGE on one time column, one partition per
 * period. Old rows go by dropping whole partitions, never by DELETE: a DELETE of a month of rows
 * writes every row again (WAL, dead tuples, vacuum, bloated indexes), a DROP writes almost nothing.
 * Periods are counted in UTC.
 */
export type PartitionPeriod = 'day' | 'month';

export interface PartitionedTable {
  /** The partitioned (parent) table in the service's schema, `partition by range (<time column>)`. */
  table: string;
  period: PartitionPeriod;
  /** Partitions wholly older than this many days are detached and dropped; without it, kept for ever. */
  retentionDays?: number;
  /** Periods created ahead of the current one, so that a write never finds no partition. */
  ahead?: number;
}

export interface PartitionLogger {
  info(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** What one maintenance run did, as qualified partition names. */
export interface PartitionMaintenanceResult {
  created: string[];
  dropped: string[];
}

const DEFAULT_AHEAD = 2;
/** How long a FINALIZE waits for a lock before it leaves the partition to the run holding it. */
const FINALIZE_LOCK_TIMEOUT_MS = 200;
/**
 * Tables dropped per statement: one commit for a month of daily partitions, while the locks a drop
 * holds (each table, its indexes and TOAST) stay far below the lock table's room, even for a backlog
 * of years left by maintenance that never ran.
 */
const DROP_BATCH = 64;
/**
 * Statements dropping a run's expired tables side by side (a power of 2: a lane is a hash's low bits).
 * Postgres frees a dropped table's files at its commit, one file after another, and the disk frees
 * them faster from several at once (docs/capacity.md, "At full size"). A pool smaller than this runs
 * them in turn.
 */
const DROP_LANES = 4;
const DAY_MS = 86_400_000;

/** The start of the period holding `at`, in UTC. */
export function periodStart(at: Date, period: PartitionPeriod): Date {
  return period === 'day'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** The start of the period `count` periods after the one starting at `start`. */
export function periodAfter(start: Date, period: PartitionPeriod, count = 1): Date {
  return period === 'day'
    ? new Date(start.getTime() + count * DAY_MS)
    : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + count, 1));
}

/** `<table>_p20261128` for a day, `<table>_p202611` for a month. */
export function partitionName(table: string, start: Date, period: PartitionPeriod): string {
  const iso = start.toISOString().slice(0, 10).replaceAll('-', '');
  return `${table}_p${period === 'day' ? iso : iso.slice(0, 6)}`;
}

/** One partition of a table as Postgres has it; `from`/`to` are undefined for MINVALUE/MAXVALUE. */
export interface PartitionInfo {
  name: string;
  from: Date | undefined;
  to: Date | undefined;
  /** A DETACH ... CONCURRENTLY was interrupted: the partition waits for DETACH ... FINALIZE. */
  detachPending: boolean;
}

/** The partitions of `schema.table`, from the catalog, ordered by lower bound. */
export async function listPartitions(db: Kysely<unknown>, schema: string, table: string): Promise<PartitionInfo[]> {
  assertIdentifier(schema);
  assertIdentifier(table);
  // Postgres prints the bounds as literals of the key's type; it parses them back itself, so the
  // session's time zone and the column's type (date or timestamptz) do not matter here.
  const { rows } = await sql<{ name: string; from: Date | null; to: Date | null; pending: boolean }>`
    select child.relname as name,
      (regexp_match(pg_get_expr(child.relpartbound, child.oid), 'FROM \\(''([^'']*)''\\)'))[1]::timestamptz as "from",
      (regexp_match(pg_get_expr(child.relpartbound, child.oid), 'TO \\(''([^'']*)''\\)'))[1]::timestamptz as "to",
      i.inhdetachpending as pending
    from pg_inherits i
    join pg_class parent on parent.oid = i.inhparent
    join pg_namespace n on n.oid = parent.relnamespace
    join pg_class child on child.oid = i.inhrelid
    where n.nspname = ${schema} and parent.relname = ${table}
    order by 2 nulls first`.execute(db);
  return rows.map((r) => ({
    name: r.name,
    from: r.from ?? undefined,
    to: r.to ?? undefined,
    detachPending: r.pending,
  }));
}

/**
 * Creates the partitions from the current period to `ahead` periods after it, and detaches then
 * drops those wholly older than the retention. Safe to run from several instances at once: a
 * partition another run created or dropped a moment ago is skipped. A wanted range that overlaps
 * an existing partition (a table converted in place keeps its old rows in one partition up to the
 * conversion) starts where that partition ends.
 */
export async function maintainPartitions(
  db: Kysely<unknown>,
  schema: string,
  tables: readonly PartitionedTable[],
  now: Date = new Date(),
): Promise<PartitionMaintenanceResult> {
  const result: PartitionMaintenanceResult = { created: [], dropped: [] };
  for (const table of tables) {
    result.created.push(...(await createPartitionsAhead(db, schema, table, now)));
    result.dropped.push(...(await dropExpired(db, schema, table, now)));
  }
  return result;
}

/**
 * Creates the partitions of one table from the current period to `ahead` periods after it; nothing
 * else. Migrations call it inside their transaction right after creating a partitioned table.
 */
export async function createPartitionsAhead(
  db: Kysely<unknown>,
  schema: string,
  table: PartitionedTable,
  now: Date = new Date(),
): Promise<string[]> {
  const existing = await listPartitions(db, schema, table.table);
  const created: string[] = [];
  let start = periodStart(now, table.period);
  for (let i = 0; i <= (table.ahead ?? DEFAULT_AHEAD); i++) {
    const end = periodAfter(start, table.period);
    const from = uncoveredFrom(existing, start, end);
    if (from !== undefined) {
      const name = partitionName(table.table, start, table.period);
      if (await createPartition(db, schema, table.table, name, from, end)) created.push(`${schema}.${name}`);
    }
    start = end;
  }
  return created;
}

/** Where [start, end) stops being covered by existing partitions; undefined when wholly covered. */
function uncoveredFrom(existing: readonly PartitionInfo[], start: Date, end: Date): Date | undefined {
  let from = start;
  for (const p of existing) {
    const coversFrom = (p.from === undefined || p.from <= from) && (p.to === undefined || p.to > from);
    if (coversFrom) from = p.to ?? end;
  }
  return from < end ? from : undefined;
}

/** True when this call created it; false when another run did first. */
async function createPartition(
  db: Kysely<unknown>,
  schema: string,
  table: string,
  name: string,
  from: Date,
  to: Date,
): Promise<boolean> {
  assertIdentifier(name);
  try {
    await sql`create table ${sql.table(`${schema}.${name}`)} partition of ${sql.table(`${schema}.${table}`)}
      for values from (${sql.lit(from.toISOString())}) to (${sql.lit(to.toISOString())})`.execute(db);
    return true;
  } catch (err) {
    // 42P07: the same partition created by another run; 42P17: an overlapping one created meanwhile.
    if (isPostgresError(err, '42P07') || isPostgresError(err, '42P17')) return false;
    throw err;
  }
}

/** The partitions of one table wholly older than its retention at `now`: what a run drops. */
export async function expiredPartitions(
  db: Kysely<unknown>,
  schema: string,
  table: PartitionedTable,
  now: Date = new Date(),
): Promise<PartitionInfo[]> {
  if (table.retentionDays === undefined) return [];
  const cutoff = new Date(now.getTime() - table.retentionDays * DAY_MS);
  return (await listPartitions(db, schema, table.table)).filter((p) => p.to !== undefined && p.to <= cutoff);
}

async function dropExpired(db: Kysely<unknown>, schema: string, table: PartitionedTable, now: Date): Promise<string[]> {
  if (table.retentionDays === undefined) return [];
  const detached: string[] = [];
  for (const p of await expiredPartitions(db, schema, table, now)) {
    if (await detach(db, schema, table.table, p)) detached.push(p.name);
  }
  return (await dropDetached(db, schema, table.table, detached)).map((name) => `${schema}.${name}`);
}

/**
 * DETACH ... CONCURRENTLY takes no lock that stops writes to the other partitions (only SHARE UPDATE
 * EXCLUSIVE on the parent), so dropping a month never waits on nor holds up the live partition. It
 * cannot run in a transaction, and each one commits twice: a run detaches every expired partition
 * first, then drops them all in one statement (dropDetached). A run interrupted on the way leaves a
 * partition pending, which the next run finalizes, or detached, which the next run drops.
 */
async function detach(db: Kysely<unknown>, schema: string, parent: string, p: PartitionInfo): Promise<boolean> {
  const parentTable = sql.table(`${schema}.${parent}`);
  const child = sql.table(`${schema}.${p.name}`);
  try {
    if (p.detachPending) {
      // A pending detach is either left by an interrupted run or being finished by another run right
      // now, which holds the partition until it is done. FINALIZE waits for no one: queued behind
      // that run, it would hold what that run waits for, and the two would deadlock.
      await db.transaction().execute(async (trx) => {
        await sql`set local lock_timeout = ${sql.lit(`${FINALIZE_LOCK_TIMEOUT_MS}ms`)}`.execute(trx);
        await sql`alter table ${parentTable} detach partition ${child} finalize`.execute(trx);
      });
    } else {
      await sql`alter table ${parentTable} detach partition ${child} concurrently`.execute(db);
    }
    return true;
  } catch (err) {
    // 42P01: dropped by another run meanwhile; 55000 / 42P16: another run is detaching it now (or
    // has); 55P03: another run holds the pending partition it is finishing; 40P01: a deadlock with
    // another run all the same, of which Postgres cancelled this side.
    if (['42P01', '55000', '42P16', '55P03', '40P01'].some((code) => isPostgresError(err, code))) return false;
    throw err;
  }
}

/**
 * Drops the tables this run detached from `parent` and any an interrupted run left detached: a plain
 * table named as its partition (`<parent>_p` and the period's digits) that is no partition. Partitions
 * are only ever created attached, so such a table was detached by a maintenance run. The tables are
 * shared among DROP_LANES lanes by a hash of their names, each lane dropping its share in one
 * statement (one commit, not one a table) on a connection of its own, side by side. Runs on several
 * instances take turns on each lane (a transaction lock), so each table is dropped, and answered, once.
 */
async function dropDetached(
  db: Kysely<unknown>,
  schema: string,
  parent: string,
  detached: readonly string[],
): Promise<string[]> {
  const lanes = Array.from({ length: DROP_LANES }, (_, lane) => dropLane(db, schema, parent, detached, lane));
  return (await Promise.all(lanes)).flat();
}

async function dropLane(
  db: Kysely<unknown>,
  schema: string,
  parent: string,
  detached: readonly string[],
  lane: number,
): Promise<string[]> {
  const dropped: string[] = [];
  for (;;) {
    const batch = await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`partitions:${schema}.${parent}:${lane}`}))`.execute(trx);
      const { rows } = await sql<{ name: string }>`
        select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${schema} and c.relkind in ('r', 'p') and not c.relispartition
          and (c.relname = any(${[...detached]}::text[]) or c.relname ~ ${`^${parent}_p([0-9]{6}|[0-9]{8})$`})
          and (hashtext(c.relname)::bigint & ${DROP_LANES - 1}) = ${lane}
        order by 1 limit ${DROP_BATCH}`.execute(trx);
      const names = rows.map((r) => r.name);
      for (const name of names) assertIdentifier(name);
      if (names.length > 0) {
        // IF EXISTS: one of ours may be gone by the time our drop gets its lock (v0.30.0 dropped
        // tables without these lanes' locks, in a rolling deploy beside v0.31.0; an operator may too).
        await sql`drop table if exists ${sql.join(names.map((name) => sql.table(`${schema}.${name}`)))}`.execute(trx);
      }
      return names;
    });
    dropped.push(...batch);
    if (batch.length < DROP_BATCH) return dropped;
  }
}

function isPostgresError(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}

export interface PartitionMaintenanceOptions {
  db: Kysely<unknown>;
  schema: string;
  tables: readonly PartitionedTable[];
  logger: PartitionLogger;
  /** Time between runs; the first run starts at once. */
  intervalMs?: number;
  /** The clock, for tests. */
  now?: () => Date;
}

export interface PartitionMaintenance {
  /** Settles after the first run, whatever its outcome (an error is logged, never thrown). */
  readonly firstRun: Promise<void>;
  /** Stops the timer and waits for a run under way. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const DEFAULT_MAINTENANCE_INTERVAL_MS = 3_600_000;

/**
 * Runs maintainPartitions now and then every interval, in the background of a service. Every
 * instance runs it; the runs tolerate each other (see maintainPartitions). Creating `ahead` periods
 * in advance leaves days of slack should every instance be down when a period begins.
 */
export function startPartitionMaintenance(opts: PartitionMaintenanceOptions): PartitionMaintenance {
  const now = opts.now ?? (() => new Date());
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const runOnce = async (): Promise<void> => {
    try {
      const result = await maintainPartitions(opts.db, opts.schema, opts.tables, now());
      if (result.created.length > 0 || result.dropped.length > 0) {
        opts.logger.info({ schema: opts.schema, ...result }, 'partitions maintained');
      }
    } catch (err) {
      opts.logger.error({ schema: opts.schema, err }, 'partition maintenance failed; retried at the next run');
    }
  };
  const firstRun = (running = runOnce());
  const timer = setInterval(() => {
    if (!stopped) running = running.then(runOnce);
  }, opts.intervalMs ?? DEFAULT_MAINTENANCE_INTERVAL_MS);
  timer.unref();
  const stop = async (): Promise<void> => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
  return { firstRun, stop, [Symbol.asyncDispose]: stop };
}
