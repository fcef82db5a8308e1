import { sql, type Kysely } from 'kysely';
import {
  createDatabase,
  createPartitionsAhead,
  createTestDatabase,
  listPartitions,
  maintainPartitions,
  startPartitionMaintenance,
  type PartitionedTable,
} from '../src';

const SCHEMA = 'svc_parts';

let test: { url: string; drop: () => Promise<void> };
let db: Kysely<unknown>;

beforeEach(async () => {
  test = await createTestDatabase();
  db = createDatabase<unknown>({ url: test.url, schema: SCHEMA });
  await sql`create schema ${sql.id(SCHEMA)}`.execute(db);
  await sql`create table ${sql.table(`${SCHEMA}.log`)} (id bigint not null, at timestamptz not null, body text)
    partition by range (at)`.execute(db);
});

afterEach(async () => {
  await db.destroy();
  await test.drop();
});

const monthly: PartitionedTable = { table: 'log', period: 'month', retentionDays: 90, ahead: 2 };

/** Names of the partitions, as Postgres lists them (independent of listPartitions). */
async function partitionNames(): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = ${`${SCHEMA}.log`}::regclass order by 1`.execute(db);
  return rows.map((r) => r.name);
}

/**
 * A reader holding `table` in an open transaction on a connection of its own, as a long query does:
 * a DROP of the table waits until `release` (which may be called more than once).
 */
async function holdTable(table: string): Promise<{ release: () => Promise<void> }> {
  const reader = createDatabase<unknown>({ url: test.url, schema: SCHEMA, poolSize: 1 });
  let letGo: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (letGo = resolve));
  let holding: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (holding = resolve));
  const reading = reader.transaction().execute(async (trx) => {
    await sql`select count(*) from ${sql.table(`${SCHEMA}.${table}`)}`.execute(trx);
    holding();
    await released;
  });
  let ended: Promise<void> | undefined;
  const release = (): Promise<void> => {
    letGo();
    ended ??= reading.finally(() => reader.destroy());
    return ended;
  };
  try {
    await Promise.race([held, reading]);
  } catch (err) {
    await release().catch(() => undefined);
    throw err;
  }
  return { release };
}

async function insertAt(at: string): Promise<void> {
  await sql`insert into ${sql.table(`${SCHEMA}.log`)} (id, at, body) values (1, ${at}::timestamptz, 'x')`.execute(db);
}

it('creates the current month and two ahead, in UTC, and writes land in them', async () => {
  const result = await maintainPartitions(db, SCHEMA, [monthly], new Date('2026-11-30T23:30:00-03:00'));
  // 23:30 in Brasília on the 30th is already December in UTC.
  expect(result.created).toEqual([`${SCHEMA}.log_p202612`, `${SCHEMA}.log_p202701`, `${SCHEMA}.log_p202702`]);
  expect(await partitionNames()).toEqual(['log_p202612', 'log_p202701', 'log_p202702']);
  await insertAt('2026-12-01T00:00:00Z');
  await insertAt('2027-02-28T23:59:59Z');
  await expect(insertAt('2027-03-01T00:00:00Z')).rejects.toThrow(/no partition/);
  // A second run finds everything in place.
  expect(await maintainPartitions(db, SCHEMA, [monthly], new Date('2026-12-01T10:00:00Z'))).toEqual({
    created: [],
    dropped: [],
  });
});

it('drops partitions wholly older than the retention, with their rows, and keeps the rest', async () => {
  await maintainPartitions(db, SCHEMA, [monthly], new Date('2026-01-15T00:00:00Z'));
  await insertAt('2026-01-20T00:00:00Z');
  await insertAt('2026-03-20T00:00:00Z');
  // 2026-05-01 minus 90 days is 2026-01-31: January (ending 02-01) is not wholly older yet.
  expect((await maintainPartitions(db, SCHEMA, [monthly], new Date('2026-05-01T00:00:00Z'))).dropped).toEqual([]);
  const later = await maintainPartitions(db, SCHEMA, [monthly], new Date('2026-05-02T00:00:00Z'));
  expect(later.dropped).toEqual([`${SCHEMA}.log_p202601`]);
  expect(await partitionNames()).not.toContain('log_p202601');
  const { rows } = await sql<{ at: Date }>`select at from ${sql.table(`${SCHEMA}.log`)} order by at`.execute(db);
  expect(rows.map((r) => r.at.toISOString())).toEqual(['2026-03-20T00:00:00.000Z']);
  const gone = await sql<{
    found: string | null;
  }>`select to_regclass(${`${SCHEMA}.log_p202601`})::text as found`.execute(db);
  expect(gone.rows[0]?.found).toBeNull();
});

it('keeps every partition of a table without retention', async () => {
  const forever: PartitionedTable = { table: 'log', period: 'month' };
  await maintainPartitions(db, SCHEMA, [forever], new Date('2020-01-01T00:00:00Z'));
  expect((await maintainPartitions(db, SCHEMA, [forever], new Date('2026-01-01T00:00:00Z'))).dropped).toEqual([]);
  expect(await partitionNames()).toContain('log_p202001');
});

it('daily partitions are named by day', async () => {
  const daily: PartitionedTable = { table: 'log', period: 'day', ahead: 1 };
  const created = await createPartitionsAhead(db, SCHEMA, daily, new Date('2026-02-28T12:00:00Z'));
  expect(created).toEqual([`${SCHEMA}.log_p20260228`, `${SCHEMA}.log_p20260301`]);
});

it('a table converted in place: new partitions start where the old rows partition ends', async () => {
  // What a conversion migration leaves: the old table attached from MINVALUE up to the conversion.
  await sql`create table ${sql.table(`${SCHEMA}.log_legacy`)} (id bigint not null, at timestamptz not null, body text)`.execute(
    db,
  );
  await sql`alter table ${sql.table(`${SCHEMA}.log`)} attach partition ${sql.table(`${SCHEMA}.log_legacy`)}
    for values from (minvalue) to ('2026-11-28T12:00:00Z')`.execute(db);
  const { created } = await maintainPartitions(db, SCHEMA, [monthly], new Date('2026-11-28T12:00:00Z'));
  expect(created).toEqual([`${SCHEMA}.log_p202611`, `${SCHEMA}.log_p202612`, `${SCHEMA}.log_p202701`]);
  const parts = await listPartitions(db, SCHEMA, 'log');
  expect(parts.map((p) => [p.name, p.from?.toISOString(), p.to?.toISOString()])).toEqual([
    ['log_legacy', undefined, '2026-11-28T12:00:00.000Z'],
    ['log_p202611', '2026-11-28T12:00:00.000Z', '2026-12-01T00:00:00.000Z'],
    ['log_p202612', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['log_p202701', '2027-01-01T00:00:00.000Z', '2027-02-01T00:00:00.000Z'],
  ]);
  // Once its newest row is past the retention, the old rows go too.
  const later = await maintainPartitions(db, SCHEMA, [monthly], new Date('2027-02-27T00:00:00Z'));
  expect(later.dropped).toEqual([`${SCHEMA}.log_legacy`]);
});

it('runs from several instances at once without an error, each partition created once', async () => {
  const at = new Date('2026-06-10T00:00:00Z');
  await maintainPartitions(db, SCHEMA, [monthly], new Date('2026-01-10T00:00:00Z'));
  const results = await Promise.all(Array.from({ length: 4 }, () => maintainPartitions(db, SCHEMA, [monthly], at)));
  // Two runs may deadlock on one partition; Postgres cancels one side and the next run finishes it.
  const later = await maintainPartitions(db, SCHEMA, [monthly], at);
  const created = [...results, later].flatMap((r) => r.created).sort();
  const dropped = [...results, later].flatMap((r) => r.dropped).sort();
  expect(created).toEqual([`${SCHEMA}.log_p202606`, `${SCHEMA}.log_p202607`, `${SCHEMA}.log_p202608`]);
  expect(dropped).toEqual([`${SCHEMA}.log_p202601`, `${SCHEMA}.log_p202602`]);
});

it('dropping an old month never holds up writes to the live one', async () => {
  await maintainPartitions(db, SCHEMA, [monthly], new Date('2026-01-10T00:00:00Z'));
  await sql`insert into ${sql.table(`${SCHEMA}.log`)} (id, at, body)
    select i, '2026-01-10'::timestamptz + (i % 1000) * interval '1 minute', repeat('x', 200)
    from generate_series(1, 200000) i`.execute(db);
  await maintainPartitions(db, SCHEMA, [{ ...monthly, retentionDays: undefined }], new Date('2026-05-10T00:00:00Z'));
  const writer = createDatabase<unknown>({ url: test.url, schema: SCHEMA, poolSize: 1 });
  let running = true;
  let slowest = 0;
  let inserts = 0;
  const writing = (async () => {
    while (running) {
      const t = performance.now();
      await insertLive(writer);
      slowest = Math.max(slowest, performance.now() - t);
      inserts++;
    }
  })();
  try {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    const { dropped } = await maintainPartitions(db, SCHEMA, [monthly], new Date('2026-05-10T00:00:00Z'));
    const dropMs = performance.now() - started;
    expect(dropped).toEqual([`${SCHEMA}.log_p202601`]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(inserts).toBeGreaterThan(10);
    // The drop and the writes go on side by side: no insert waited for the drop to end.
    expect(slowest).toBeLessThan(Math.max(dropMs, 200));
  } finally {
    running = false;
    await writing;
    await writer.destroy();
  }
});

async function insertLive(writer: Kysely<unknown>): Promise<void> {
  await sql`insert into ${sql.table(`${SCHEMA}.log`)} (id, at, body) values (2, '2026-05-10T00:00:00Z', 'live')`.execute(
    writer,
  );
}

it('startPartitionMaintenance runs at once, logs failures and goes on, and stops', async () => {
  const lines: { level: string; message: string }[] = [];
  const logger = {
    info: (_: object, message: string) => void lines.push({ level: 'info', message }),
    error: (_: object, message: string) => void lines.push({ level: 'error', message }),
  };
  const broken = startPartitionMaintenance({
    db,
    schema: SCHEMA,
    tables: [{ table: 'absent', period: 'day' }],
    logger,
  });
  await broken.firstRun;
  await broken.stop();
  expect(lines.map((l) => l.level)).toEqual(['error']);

  const maintenance = startPartitionMaintenance({ db, schema: SCHEMA, tables: [monthly], logger, intervalMs: 50 });
  await maintenance.firstRun;
  await maintenance[Symbol.asyncDispose]();
  expect(lines.map((l) => l.message)).toEqual([
    'partition maintenance failed; retried at the next run',
    'partitions maintained',
  ]);
  expect((await partitionNames()).length).toBe(3);
});

it('drops what an interrupted run left detached, and no other table', async () => {
  await maintainPartitions(db, SCHEMA, [monthly], new Date('2026-01-10T00:00:00Z'));
  // A run stopped between its detach and its drop leaves a plain table named as a partition.
  await sql`alter table ${sql.table(`${SCHEMA}.log`)} detach partition ${sql.table(`${SCHEMA}.log_p202602`)}`.execute(
    db,
  );
  await sql`create table ${sql.table(`${SCHEMA}.log_archive`)} (id bigint)`.execute(db);
  await sql`create table ${sql.table(`${SCHEMA}.log_p2026`)} (id bigint)`.execute(db);
  // Nothing has expired on this clock: the drop is the leftover only.
  const { dropped } = await maintainPartitions(db, SCHEMA, [monthly], new Date('2026-01-11T00:00:00Z'));
  expect(dropped).toEqual([`${SCHEMA}.log_p202602`]);
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${SCHEMA} and c.relkind in ('r', 'p') order by 1`.execute(db);
  expect(rows.map((r) => r.name)).toEqual(['log', 'log_archive', 'log_p2026', 'log_p202601', 'log_p202603']);
});

it('drops side by side: a table held by a reader holds up only its own share, and one connection is enough', async () => {
  // Tables left detached by interrupted runs, named as days of the log: every run drops them.
  const days = Array.from({ length: 16 }, (_, i) => `log_p202601${String(i + 1).padStart(2, '0')}`);
  for (const day of days) await sql`create table ${sql.table(`${SCHEMA}.${day}`)} (id bigint)`.execute(db);
  const left = async (): Promise<string[]> => {
    const { rows } = await sql<{ name: string }>`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${SCHEMA} and c.relname = any(${days}::text[]) order by 1`.execute(db);
    return rows.map((r) => r.name);
  };

  const single = createDatabase<unknown>({ url: test.url, schema: SCHEMA, poolSize: 1 });
  const reader = await holdTable(days[0]);
  try {
    const run = maintainPartitions(db, SCHEMA, [monthly], new Date('2026-01-10T00:00:00Z'));
    // The other shares are dropped while the held table's waits for its reader.
    const deadline = Date.now() + 10_000;
    let remaining = await left();
    while (remaining.length === days.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      remaining = await left();
    }
    expect(remaining).toContain(days[0]);
    expect(remaining.length).toBeLessThan(days.length);
    await reader.release();
    expect((await run).dropped.sort()).toEqual(days.map((d) => `${SCHEMA}.${d}`));
    expect(await left()).toEqual([]);

    // With a pool of one connection the shares are dropped in turn, each once.
    for (const day of days) await sql`create table ${sql.table(`${SCHEMA}.${day}`)} (id bigint)`.execute(db);
    const alone = await maintainPartitions(single, SCHEMA, [monthly], new Date('2026-01-10T00:00:00Z'));
    expect(alone.dropped.sort()).toEqual(days.map((d) => `${SCHEMA}.${d}`));
    expect(await left()).toEqual([]);
  } finally {
    await reader.release();
    await single.destroy();
  }
});

it("a table dropped meanwhile by a run that takes no lane's lock (v0.30.0's) is no error", async () => {
  // v0.30.0 dropped each detached table on its own, without a lock: in a rolling deploy beside
  // v0.31.0 both releases could reach one table, and whichever was second found it gone.
  const day = 'log_p20260105';
  await sql`create table ${sql.table(`${SCHEMA}.${day}`)} (id bigint)`.execute(db);
  const previous = createDatabase<unknown>({ url: test.url, schema: SCHEMA, poolSize: 1 });
  const reader = await holdTable(day);
  try {
    const waitingDrops = async (n: number): Promise<void> => {
      for (let i = 0; i < 500; i++) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_locks
          where relation = ${`${SCHEMA}.${day}`}::regclass and not granted`.execute(db);
        if ((rows[0]?.n ?? 0) >= n) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`never saw ${n} drops waiting`);
    };
    // The previous release's drop queues first, this release's run behind it.
    const theirs = sql`drop table ${sql.table(`${SCHEMA}.${day}`)}`.execute(previous);
    await waitingDrops(1);
    const ours = maintainPartitions(db, SCHEMA, [monthly], new Date('2026-01-10T00:00:00Z'));
    await waitingDrops(2);
    await reader.release();
    await theirs;
    await expect(ours).resolves.toMatchObject({ created: expect.any(Array) });
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_class c
      join pg_namespace n on n.oid = c.relnamespace where n.nspname = ${SCHEMA} and c.relname = ${day}`.execute(db);
    expect(rows[0]?.n).toBe(0);
  } finally {
    await reader.release();
    await previous.destroy();
  }
});

it('drops a backlog of many expired days, each reported once', async () => {
  const daily: PartitionedTable = { table: 'log', period: 'day', retentionDays: 1, ahead: 150 };
  await createPartitionsAhead(db, SCHEMA, daily, new Date('2026-01-01T00:00:00Z'));
  const { dropped } = await maintainPartitions(db, SCHEMA, [{ ...daily, ahead: 0 }], new Date('2026-06-01T00:00:00Z'));
  expect(dropped).toHaveLength(150);
  expect(new Set(dropped).size).toBe(150);
  expect((await partitionNames()).sort()).toEqual(['log_p20260531', 'log_p20260601']);
});

it('runs racing on many expired days never fail, and drop each day once, the next run at the latest', async () => {
  const runners = Array.from({ length: 6 }, () =>
    createDatabase<unknown>({ url: test.url, schema: SCHEMA, poolSize: 2 }),
  );
  const daily: PartitionedTable = { table: 'log', period: 'day', retentionDays: 1, ahead: 0 };
  try {
    for (let round = 0; round < 15; round++) {
      await sql`drop table ${sql.table(`${SCHEMA}.log`)}`.execute(db);
      await sql`create table ${sql.table(`${SCHEMA}.log`)} (id bigint not null, at timestamptz not null, body text)
        partition by range (at)`.execute(db);
      await createPartitionsAhead(db, SCHEMA, { ...daily, ahead: 29 }, new Date('2026-01-01T00:00:00Z'));
      const at = new Date('2026-02-01T00:00:00Z');
      const results = await Promise.all(runners.map((runner) => maintainPartitions(runner, SCHEMA, [daily], at)));
      const later = await maintainPartitions(db, SCHEMA, [daily], at);
      const dropped = [...results, later].flatMap((r) => r.dropped);
      expect(dropped).toHaveLength(30);
      expect(new Set(dropped).size).toBe(30);
    }
  } finally {
    for (const runner of runners) await runner.destroy();
  }
});
