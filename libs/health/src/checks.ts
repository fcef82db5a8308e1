import { sql, type Kysely } from 'kysely';

/** One dependency /readyz looks at. */
export interface ReadinessCheck {
  /** Named in the /readyz answer, e.g. "postgres". */
  readonly name: string;
  /** Resolves when the dependency is usable; rejects (or never settles, cut by the timeout) otherwise. */
  probe(): Promise<void>;
}

export interface CheckStatus {
  status: 'ok' | 'failing';
  /** Why it fails; absent when ok. */
  error?: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckStatus>;
  /** Names of the failing checks, so an operator sees at once what is wrong. */
  failing: string[];
}

/** Default wait per check: a readiness probe must answer well within a load balancer's own timeout. */
export const DEFAULT_CHECK_TIMEOUT_MS = 2_000;

/** Runs every check at once, each cut at `timeoutMs`, and reports which fail. */
export async function evaluateReadiness(
  checks: readonly ReadinessCheck[],
  timeoutMs = DEFAULT_CHECK_TIMEOUT_MS,
): Promise<ReadinessReport> {
  const results = await Promise.all(
    checks.map(async (check): Promise<[string, CheckStatus]> => {
      try {
        await withTimeout(check.probe(), timeoutMs, `${check.name} did not answer within ${timeoutMs} ms`);
        return [check.name, { status: 'ok' }];
      } catch (err) {
        return [check.name, { status: 'failing', error: describe(err) }];
      }
    }),
  );
  const failing = results.filter(([, s]) => s.status === 'failing').map(([name]) => name);
  return { ready: failing.length === 0, checks: Object.fromEntries(results), failing };
}

/** Postgres answers `select 1`: the pool can hand out (or open) a working connection. */
export function postgresCheck<DB>(db: Kysely<DB>): ReadinessCheck {
  return {
    name: 'postgres',
    probe: async () => {
      await sql`select 1`.execute(db);
    },
  };
}

/** What natsCheck needs of a NATS connection (a subset of nats.js's NatsConnection). */
export interface PingableConnection {
  isClosed(): boolean;
  /** Round trip to the server; while reconnecting it waits, and the check's timeout cuts it. */
  flush(): Promise<void>;
}

/** NATS is connected and the server answers a PING. */
export function natsCheck(connection: PingableConnection): ReadinessCheck {
  return {
    name: 'nats',
    probe: async () => {
      if (connection.isClosed()) throw new Error('the NATS connection is closed');
      await connection.flush();
    },
  };
}

/**
 * Every migration of the service's schema is recorded in kysely's migration table. Once seen
 * complete it stays complete (migrations never run backwards here), so later probes cost no query
 * and a Postgres outage is reported by the postgres check alone.
 */
export function migrationsCheck<DB>(db: Kysely<DB>, schema: string, expected: readonly string[]): ReadinessCheck {
  let done = false;
  return {
    name: 'migrations',
    probe: async () => {
      if (done) return;
      const applied = await sql<{ name: string }>`select name from ${sql.table(`${schema}.kysely_migration`)}`.execute(
        db,
      );
      const names = new Set(applied.rows.map((r) => r.name));
      const missing = expected.filter((name) => !names.has(name));
      if (missing.length > 0) throw new Error(`migrations not applied: ${missing.join(', ')}`);
      done = true;
    },
  };
}

/** What a service on Postgres and NATS is ready on: its database, its bus and its schema's migrations. */
export interface ServiceDependencies<DB> {
  db: Kysely<DB>;
  nats: PingableConnection;
  schema: string;
  /** The service's migrations: ready only once the schema has them all. */
  migrations: Record<string, unknown>;
}

/** The readiness checks of a service on Postgres and NATS, the same for every such service. */
export function serviceChecks<DB>({ db, nats, schema, migrations }: ServiceDependencies<DB>): ReadinessCheck[] {
  return [postgresCheck(db), natsCheck(nats), migrationsCheck(db, schema, Object.keys(migrations))];
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  // A probe that loses the race may still reject later: swallow that, it has been reported already.
  work.catch(() => undefined);
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function describe(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return describe(err.errors[0]);
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
