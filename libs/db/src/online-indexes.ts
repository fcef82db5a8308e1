import { sql, type Kysely } from 'kysely';
import { assertIdentifier } from './database';

/**
 * An index on a large, busy table, built outside the migrations: a migration runs in a transaction,
 * where a plain CREATE INDEX holds writes to the table for the whole build (minutes on tens of
 * millions of rows, during a rolling deploy). CREATE INDEX CONCURRENTLY lets writes go on but cannot
 * run in a transaction, so a service builds these after migrating, in the background.
 */
export interface OnlineIndex {
  /** The index's name in the service's schema. */
  name: string;
  /** The table it indexes, in the service's schema. */
  table: string;
  /** `create [unique] index concurrently if not exists <name> on <table> ...` (unqualified names). */
  sql: string;
  /**
   * The partitioned index this one completes, when `table` is a partition: a parent index made ON ONLY
   * stays INVALID until each partition's is attached, and building it from the parent would lock
   * writes for the build. Attached once built. A partition dropped since (its table gone) needs none.
   */
  attachTo?: string;
}

export interface OnlineIndexLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/**
 * `done`: every index exists and is valid (`built`: those this call built). `busy`: another caller
 * holds the lock. `stopped`: stopped before the end (`built`: those built before).
 */
export type OnlineIndexesOutcome =
  { status: 'done'; built: string[] } | { status: 'busy' } | { status: 'stopped'; built: string[] };

export interface OnlineIndexesRun {
  /** Settles `ready` once every index exists and is valid, `stopped` if stopped before. Never rejects. */
  readonly done: Promise<'ready' | 'stopped'>;
  /** Cancels a build under way (its index is left INVALID; the next run drops and rebuilds it) and waits for the run to end. */
  stop(): Promise<void>;
}

/** What a stop needs: the backend running a build now, to cancel it. */
class BuildControl {
  stopping = false;
  private running: { pid: number; work: Promise<unknown> } | undefined;

  async run<T>(pid: number, work: () => Promise<T>): Promise<T> {
    // A stop between two statements found nothing to cancel: start no more.
    if (this.stopping) throw new Error('online index build stopped');
    const promise = work();
    this.running = { pid, work: promise };
    try {
      return await promise;
    } finally {
      this.running = undefined;
    }
  }

  /** Cancels the statement under way, if any, from another connection of the pool. */
  async stop(db: Kysely<unknown>): Promise<void> {
    this.stopping = true;
    const running = this.running;
    if (!running) return;
    await sql`select pg_cancel_backend(${running.pid})`.execute(db).catch(() => undefined);
    await running.work.catch(() => undefined);
  }
}

/** Until every index exists: how long after a failure, or while another instance builds, before looking again. */
const RETRY_MS = 60_000;

/**
 * Builds the missing indexes of `defs` in the background, one instance at a time, and returns at once.
 *
 * Readiness does not wait for it: every query works without these indexes, only slower, and a build
 * may take many minutes. A failure is logged and retried after `retryMs`; it never stops the service.
 */
export function ensureOnlineIndexes<DB>(
  db: Kysely<DB>,
  schema: string,
  defs: readonly OnlineIndex[],
  logger: OnlineIndexLogger,
  opts: { retryMs?: number } = {},
): OnlineIndexesRun {
  checkDefinitions(schema, defs);
  const retryMs = opts.retryMs ?? RETRY_MS;
  const control = new BuildControl();
  let wake: () => void = () => undefined;
  const done = (async (): Promise<'ready' | 'stopped'> => {
    while (!control.stopping) {
      try {
        const outcome = await buildMissing(db as unknown as Kysely<unknown>, schema, defs, logger, control);
        if (outcome.status === 'done') return 'ready';
        if (outcome.status === 'stopped') break;
        logger.info({ schema, retryMs }, 'online indexes: another instance is building them; looking again later');
      } catch (err) {
        if (control.stopping) {
          logger.info({ schema }, 'online indexes: build stopped; the next run repairs an interrupted one');
          break;
        }
        logger.error({ err, schema, retryMs }, 'online indexes: build failed; retrying later');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, retryMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return 'stopped';
  })();
  return {
    done,
    async stop() {
      await control.stop(db as unknown as Kysely<unknown>);
      wake();
      await done;
    },
  };
}

/**
 * One pass: when an index is missing or INVALID, takes the schema's session advisory lock on one
 * connection (CONCURRENTLY cannot run in a transaction, so no transaction lock) and builds what is
 * missing, repairing INVALID indexes (left by an interrupted concurrent build) by dropping and
 * rebuilding them. Returns `busy` without waiting when another caller holds the lock. Throws on a
 * failed build. `db` is createDatabase's for `schema`: the definitions' names resolve there.
 */
export async function ensureOnlineIndexesOnce<DB>(
  db: Kysely<DB>,
  schema: string,
  defs: readonly OnlineIndex[],
  logger: OnlineIndexLogger,
): Promise<OnlineIndexesOutcome> {
  checkDefinitions(schema, defs);
  return buildMissing(db as unknown as Kysely<unknown>, schema, defs, logger, new BuildControl());
}

async function buildMissing(
  db: Kysely<unknown>,
  schema: string,
  defs: readonly OnlineIndex[],
  logger: OnlineIndexLogger,
  control: BuildControl,
): Promise<OnlineIndexesOutcome> {
  const initial = await indexStates(db, schema, defs);
  if (defs.every((d) => isDone(initial.get(d.name)))) return { status: 'done', built: [] };
  return db.connection().execute(async (conn) => {
    const lockKey = `online-indexes:${schema}`;
    const locked = await sql<{ got: boolean }>`select pg_try_advisory_lock(hashtext(${lockKey})) as got`.execute(conn);
    if (!locked.rows[0]?.got) return { status: 'busy' } as const;
    try {
      const pid = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(conn);
      const built: string[] = [];
      for (const def of defs) {
        if (control.stopping) return { status: 'stopped', built } as const;
        // Read again under the lock: the previous holder may have built it meanwhile.
        const state = (await indexStates(conn, schema, [def])).get(def.name);
        if (state === 'valid' || state === 'table gone') continue;
        const index = `${schema}.${def.name}`;
        if (state === 'unattached') {
          await attach(conn, schema, def, logger);
          continue;
        }
        if (state === 'invalid') {
          logger.warn({ index }, 'online index INVALID (an interrupted build): dropping it to build it again');
          await control.run(pid.rows[0].pid, () => sql.raw(`drop index concurrently if exists ${index}`).execute(conn));
        }
        logger.info({ index, table: def.table }, 'online index build started');
        const started = Date.now();
        await control.run(pid.rows[0].pid, () => sql.raw(def.sql).execute(conn));
        logger.info({ index, table: def.table, durationMs: Date.now() - started }, 'online index built');
        await attach(conn, schema, def, logger);
        built.push(def.name);
      }
      return { status: 'done', built } as const;
    } finally {
      await unlock(conn, lockKey);
    }
  });
}

/**
 * `valid`: built, valid, and attached to its `attachTo` if it has one. `unattached`: built and valid
 * but not yet attached. `table gone`: a partition's index whose partition was dropped. Missing: absent.
 */
type IndexState = 'valid' | 'invalid' | 'unattached' | 'table gone';

function isDone(state: IndexState | undefined): boolean {
  return state === 'valid' || state === 'table gone';
}

async function indexStates(
  db: Kysely<unknown>,
  schema: string,
  defs: readonly OnlineIndex[],
): Promise<Map<string, IndexState>> {
  const rows = await sql<{ name: string; kind: string; valid: boolean | null; parent: string | null }>`
    select c.relname as name, c.relkind as kind, i.indisvalid as valid, p.relname as parent
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    left join pg_index i on i.indexrelid = c.oid
    left join pg_inherits h on h.inhrelid = c.oid
    left join pg_class p on p.oid = h.inhparent
    where n.nspname = ${schema} and c.relname = any(${defs.map((d) => d.name)}::text[])`.execute(db);
  const states = new Map<string, IndexState>();
  for (const row of rows.rows) {
    // A table of that name would make IF NOT EXISTS skip forever: say so instead.
    if (row.kind !== 'i') throw new Error(`${schema}.${row.name} exists and is not an index`);
    const def = defs.find((d) => d.name === row.name);
    const attached = def?.attachTo === undefined || row.parent === def.attachTo;
    states.set(row.name, !row.valid ? 'invalid' : attached ? 'valid' : 'unattached');
  }
  const partitions = defs.filter((d) => d.attachTo !== undefined && !states.has(d.name));
  if (partitions.length > 0) {
    const tables = await sql<{ name: string }>`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${schema} and c.relname = any(${partitions.map((d) => d.table)}::text[])`.execute(db);
    const present = new Set(tables.rows.map((r) => r.name));
    for (const def of partitions) if (!present.has(def.table)) states.set(def.name, 'table gone');
  }
  return states;
}

/** Joins a partition's index to its parent index: a catalog change, no build. */
async function attach(
  conn: Kysely<unknown>,
  schema: string,
  def: OnlineIndex,
  logger: OnlineIndexLogger,
): Promise<void> {
  if (def.attachTo === undefined) return;
  await sql.raw(`alter index ${schema}.${def.attachTo} attach partition ${schema}.${def.name}`).execute(conn);
  logger.info(
    { index: `${schema}.${def.name}`, parent: `${schema}.${def.attachTo}` },
    'online index attached to its parent',
  );
}

/** A lock left on a connection the pool lends again would keep every later run out: try hard. */
async function unlock(conn: Kysely<unknown>, lockKey: string): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await sql`select pg_advisory_unlock(hashtext(${lockKey}))`.execute(conn);
      return;
    } catch {
      // A cancel meant for the build may land on this statement; a lost connection drops the lock anyway.
    }
  }
}

function checkDefinitions(schema: string, defs: readonly OnlineIndex[]): void {
  assertIdentifier(schema);
  for (const def of defs) {
    assertIdentifier(def.name);
    assertIdentifier(def.table);
    if (def.attachTo !== undefined) assertIdentifier(def.attachTo);
    const shape = new RegExp(
      `^\\s*create\\s+(unique\\s+)?index\\s+concurrently\\s+if\\s+not\\s+exists\\s+${def.name}\\s+on\\s+${def.table}[\\s(]`,
      'i',
    );
    if (!shape.test(def.sql)) {
      throw new Error(
        `online index ${def.name}: sql must start "create index concurrently if not exists ${def.name} on ${def.table}"`,
      );
    }
  }
}
