/**
 * bench/conversion-locks: how long the in-place conversion migrations hold their tables' ACCESS
 * EXCLUSIVE lock. Each runs in one transaction whose first statement is `lock table ... in access
 * exclusive mode`, so the migration's whole length, its commit included, is how long every reader and
 * writer of those tables waits. The conversions measured:
 *   - receivables 0015_state_history_by_month: state_history partitioned by month, the old table
 *     attached as its first partition (the attach scans it: no check constraint proves the bound);
 *   - receivables 0019_notice_queue_apart_from_log: bank_notices split into a queue and a monthly log
 *     (a check constraint validated by a scan, the unapplied notices copied to the queue through the
 *     old due index; the log's index on id is left to the online step for the old rows);
 *   - callback-svc 0009_queue_apart_from_log: events and attempts split into a queue and a daily log
 *     (a check constraint validated on each, the pending and dead events copied to the queue).
 * Each in its own new database: migrated to just before the conversion, as the previous release left
 * it (its online indexes on the converted tables too, which it built after its migrations); the
 * converted tables seeded with INSERT ... SELECT FROM generate_series, then VACUUM ANALYZE (hint bits
 * and visibility map set, as on a table that has lived) and CHECKPOINT (no dirty pages left to write
 * during the measure). Beside it, bare baselines on the same tables in the same run: one sequential
 * scan (count(*) in one process, as a constraint's validation reads it; best of 3), a copy of the
 * table (CREATE TABLE AS) and a B-tree on the copy's id column. Then the conversion alone is applied
 * with migrateToLatest while a writer inserts a row into the converted table every 10 ms, as the
 * previous release's writes look: the migration's time is the lock's hold, and the writer's slowest
 * insert is what an app sees.
 *
 * Flags: --rows N (rows per converted table; callbacks' attempts are 2 per event; default
 * 1,000,000), --only 0015,0019,0009 (these conversions only). A small run checks the bench in a minute:
 *   npx tsx bench/conversion-locks.ts --rows 20000
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { Kysely, Migration } from 'kysely';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import {
  migrations as receivablesMigrations,
  SCHEMA as RECEIVABLES,
} from '@payments/receivables-svc/src/db/migrations';
import { migrations as callbackMigrations, SCHEMA as CALLBACKS } from '@payments/callback-svc/src/db/migrations';
import { fmt, runBench, runUntilStopped } from './support';

/** How often the writer inserts a row: an app's steady trickle, not a load of its own. */
const WRITER_PAUSE_MS = 10;
/** The writer runs this long before and after the migration, so its slowest insert is the lock's. */
const WRITER_MARGIN_MS = 1_000;
/** The one receivable the state history's writer names (the old table's foreign key checks it). */
const WRITER_RECEIVABLE = '00000000-0000-4000-8000-00000000beef';
const WRITER_TENANT = '00000000-0000-4000-8000-00000000cafe';

interface Options {
  rows: number;
  only: string[] | undefined;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' },
      only: { type: 'string' },
    },
  });
  const rows = Number(values.rows);
  if (!Number.isInteger(rows) || rows < 1000) throw new Error(`--rows ${values.rows}: a whole number from 1000`);
  return { rows, only: values.only?.split(',') };
}

/** A converted table: its name and the column its copy's index is built on. */
interface ConvertedTable {
  name: string;
  idColumn: string;
}

/** One conversion: its service's migrations, the tables it converts, their seed and the writer's insert. */
interface Conversion {
  key: string;
  schema: string;
  migrations: Record<string, Migration>;
  tables: ConvertedTable[];
  /** Seeds the tables with `rows` rows each (attempts: 2 per event), as the superuser. */
  seed(client: pg.Client, rows: number): Promise<void>;
  /** What the previous release built online after its migrations, on the converted tables. */
  previousOnlineIndexes: string[];
  /** The writer's INSERT, its row numbered $1 (unique keys). */
  writerInsert: string;
}

// ---------------------------------------------------------------------------------------------
// The seeds: columns as the services write them, times spread back from a minute ago.

/** `at`, spread evenly over `days` back from a minute ago, oldest first (row i of n). */
const spreadBack = (rows: number, days: number) =>
  `now() - interval '1 minute' - make_interval(secs => (${rows} - i) * ${(days * 86_400) / rows}::float8)`;

/**
 * The state history: 4 entries per charge (received, registered, paid or, 1 in 50, rejected, and the
 * callback's), over the last 12 months. The old table's foreign key to receivables is not checked
 * during the seed (session_replication_role): the conversion never reads it, and a charge per 4
 * entries would only make the seed longer.
 */
async function seedStateHistory(client: pg.Client, rows: number): Promise<void> {
  await insertWriterReceivable(client);
  await client.query(`set session_replication_role = replica`);
  await client.query(`
    insert into state_history (receivable_id, tenant_id, from_state, to_state, reason, at)
    select md5('receivable' || (i / 4))::uuid, md5('tenant' || (i / 4) % 200)::uuid,
      (array[null, 'pending', 'pending', s.final])[i % 4 + 1],
      (array['pending', 'pending', s.final, s.final])[i % 4 + 1],
      (array['received from the ERP', 'registered at the bank', s.why, 'callback delivered'])[i % 4 + 1],
      ${spreadBack(rows, 365)}
    from generate_series(1, ${rows}) i,
      lateral (select case when (i / 4) % 50 = 0 then 'rejected' else 'approved' end as final,
        case when (i / 4) % 50 = 0 then 'refused by the bank' else 'paid at the bank' end as why) s`);
  await client.query(`set session_replication_role = origin`);
}

/** A charge as the previous release's intake writes it, for the writer's history entries. */
async function insertWriterReceivable(client: pg.Client): Promise<void> {
  await client.query(
    `insert into receivables (id, tenant_id, account_receivable_id, client_id, payment_slip_id, payment_method,
      url_callback, emission_date, due_date, amount_cents, discount_type, items, payer, client_name, state,
      registration_status, account_receivable_id_as_sent, client_id_as_sent, payment_slip_id_as_sent)
    values ($1::uuid, $2, $1::uuid, gen_random_uuid(), gen_random_uuid(), 1, 'https://erp.example.com/cb', '2020-01-01',
      '2020-02-01', 1000, 'NaoTemDesconto', '[]', '{}', 'Payer', 'pending', 'registered', $1::text, 'c', 's')`,
    [WRITER_RECEIVABLE, WRITER_TENANT],
  );
}

/**
 * The bank's notices over the last 12 months: 99 % applied, 1 % still owed (an unknown charge,
 * tried again later); half from reconciliation's lists (a dedup key per charge and kind), half from
 * webhooks (none); 1 in 20 a cancellation.
 */
async function seedBankNotices(client: pg.Client, rows: number): Promise<void> {
  await client.query(`
    insert into bank_notices (provider_account_id, tenant_id, account_key, charge_id, kind, situation, situation_at,
      situation_at_precision, amount_received_cents, payment_method, source, verified, dedup_key, received_at,
      attempts, next_attempt_at, applied_at, outcome, last_error)
    select md5('account' || i % 400)::uuid, md5('tenant' || i % 200)::uuid, 'inter:' || i % 400,
      n.charge_id, n.kind, case when n.kind = 'paid' then 'RECEBIDO' else 'CANCELADO' end, t.at - interval '3 seconds',
      'time', case when n.kind = 'paid' then 10000 + i % 90000 end, case when i % 3 = 0 then 'pix' else 'boleto' end,
      case when i % 2 = 0 then 'list' else 'webhook' end, true,
      case when i % 2 = 0 then n.charge_id || ':' || n.kind end, t.at,
      case when n.owed then 3 else 1 end, case when n.owed then now() + interval '5 minutes' else t.at end,
      case when n.owed then null else t.at + interval '2 seconds' end,
      case when n.owed then 'unknown_charge' else n.kind end, null
    from generate_series(1, ${rows}) i,
      lateral (select ${spreadBack(rows, 365)} as at) t,
      lateral (select lpad(i::text, 12, '0') as charge_id, case when i % 20 = 0 then 'cancelled' else 'paid' end as kind,
        i % 100 = 0 as owed) n`);
}

/**
 * The callbacks of the last 30 days: 98.5 % delivered, 1 % pending, 0.5 % dead, each with a body
 * of about 300 bytes and 2 attempts (a 503, then the answer).
 */
async function seedCallbacks(client: pg.Client, rows: number): Promise<void> {
  const status = `case when i % 100 = 0 then 'pending' when i % 200 = 1 then 'dead' else 'delivered' end`;
  await client.query(`
    insert into events (event_id, tenant_id, event_type, url, target_host, body, status, attempt_count, failures_in_run,
      next_attempt_at, created_at, delivered_at, dead_at, trace_context, receivable_id)
    select 'evt_' || md5('event' || i), md5('tenant' || i % 200)::uuid, 'receivable.paid',
      'https://erp' || i % 300 || '.example.com/hooks/payments', 'erp' || i % 300 || '.example.com',
      json_build_object('type', 'receivable.paid', 'accounts_receivable_id', md5('receivable' || i)::uuid,
        'amount', 1000 + i % 9000, 'paid_at', t.at, 'payer', 'Maria da Silva', 'our_number', lpad(i::text, 12, '0'),
        'bank', 'inter', 'method', 'boleto')::text,
      s.status, case s.status when 'dead' then 12 else 2 end, case s.status when 'delivered' then 0 else 2 end,
      case s.status when 'pending' then now() + interval '30 seconds' end, t.at,
      case s.status when 'delivered' then t.at + interval '3 seconds' end,
      case s.status when 'dead' then t.at + interval '1 day' end,
      json_build_object('traceparent', '00-' || md5('trace' || i) || '-' || left(md5('span' || i), 16) || '-01'),
      md5('receivable' || i)::uuid
    from generate_series(1, ${rows}) i, lateral (select date_trunc('milliseconds', ${spreadBack(rows, 30)}) as at) t,
      lateral (select ${status} as status) s`);
  await client.query(`
    insert into attempts (event_id, tenant_id, attempted_at, status_code, error, duration_ms, response_excerpt)
    select 'evt_' || md5('event' || i), md5('tenant' || i % 200)::uuid, t.at + make_interval(secs => 1 + 2 * k),
      case when k = 1 and s.status = 'delivered' then 200 else 503 end,
      case when k = 1 and s.status = 'delivered' then null else 'HTTP 503' end, 40 + i % 200,
      case when k = 1 and s.status = 'delivered' then '{"ok":true}' else 'Service Unavailable' end
    from generate_series(1, ${rows}) i, generate_series(0, 1) k,
      lateral (select date_trunc('milliseconds', ${spreadBack(rows, 30)}) as at) t, lateral (select ${status} as status) s`);
}

const CONVERSIONS: Conversion[] = [
  {
    key: '0015_state_history_by_month',
    schema: RECEIVABLES,
    migrations: receivablesMigrations,
    tables: [{ name: 'state_history', idColumn: 'id' }],
    seed: seedStateHistory,
    previousOnlineIndexes: [
      `create index state_history_rejected_at_idx on state_history (at) where to_state = 'rejected'`,
    ],
    writerInsert: `insert into ${RECEIVABLES}.state_history (receivable_id, tenant_id, from_state, to_state, reason)
      values ('${WRITER_RECEIVABLE}', '${WRITER_TENANT}', 'pending', 'pending', 'bench writer ' || $1::int)`,
  },
  {
    key: '0019_notice_queue_apart_from_log',
    schema: RECEIVABLES,
    migrations: receivablesMigrations,
    tables: [{ name: 'bank_notices', idColumn: 'id' }],
    seed: seedBankNotices,
    previousOnlineIndexes: [
      `create index bank_notices_applied_received_at_idx on bank_notices (received_at) where applied_at is not null`,
    ],
    // As notice-store.ts stores a reconciliation list's notice.
    writerInsert: `insert into ${RECEIVABLES}.bank_notices (provider_account_id, tenant_id, account_key, charge_id, kind,
        situation, situation_at, situation_at_precision, amount_received_cents, payment_method, source, verified, dedup_key)
      values (md5('account1')::uuid, md5('tenant1')::uuid, 'inter:1', 'writer' || $1::int, 'paid', 'RECEBIDO', now(),
        'time', 1000, 'boleto', 'list', true, 'writer' || $1::int || ':paid')
      on conflict (tenant_id, account_key, dedup_key) where dedup_key is not null do nothing`,
  },
  {
    key: '0009_queue_apart_from_log',
    schema: CALLBACKS,
    migrations: callbackMigrations,
    tables: [
      { name: 'events', idColumn: 'event_id' },
      { name: 'attempts', idColumn: 'id' },
    ],
    seed: seedCallbacks,
    previousOnlineIndexes: [
      `create index events_tenant_receivable_idx on events (tenant_id, receivable_id, created_at desc, event_id desc)
        where receivable_id is not null`,
      `create index events_tenant_dead_idx on events (tenant_id, dead_at) where status = 'dead'`,
      `create index events_dead_at_idx on events (dead_at) where status = 'dead'`,
      `create index attempts_attempted_at_idx on attempts (attempted_at)`,
    ],
    // As the previous release's EventStore ingests an event.
    writerInsert: `insert into ${CALLBACKS}.events (event_id, tenant_id, event_type, url, target_host, body, status, next_attempt_at)
      values ('writer_' || $1::int, md5('tenant1')::uuid, 'receivable.paid', 'https://erp1.example.com/hooks/payments',
        'erp1.example.com', '{}', 'pending', now())
      on conflict (event_id) do nothing`,
  },
];

// ---------------------------------------------------------------------------------------------
// The measures

/** A converted table's size and the bare baselines on it, ms. */
interface TableFigures {
  name: string;
  rows: number;
  heapMb: number;
  totalMb: number;
  scanMs: number;
  copyMs: number;
  indexMs: number;
}

/** The conversion applied under a writer. */
interface ConversionFigures {
  /** migrateToLatest's whole call: the role's settings, the conversion's transaction, the search_path. */
  migrateMs: number;
  /** From the conversion's first statement (the lock) to migrateToLatest's return: the lock's hold, commit included (at most). */
  holdMs: number;
  upMs: number;
}

/** What the writer saw meanwhile. */
interface WriterFigures {
  writerLongestMs: number;
  writerInserts: number;
  writerFailures: string[];
}

async function timedMs(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** VACUUM ANALYZE, then a checkpoint: hint bits set and nothing dirty left for the measure to write. */
async function settle(client: pg.Client, table: string): Promise<void> {
  await client.query(`vacuum analyze ${table}`);
  await client.query('checkpoint');
}

/**
 * The table's size, one sequential scan of it (no parallel workers: a constraint's validation and
 * an attach read it in one process), a copy of it and a B-tree on the copy's id column.
 */
async function baseline(client: pg.Client, table: ConvertedTable): Promise<TableFigures> {
  const { rows } = await client.query<{ n: string; heap: string; total: string }>(
    `select (select count(*) from ${table.name}) as n, pg_relation_size($1::regclass) as heap,
      pg_total_relation_size($1::regclass) as total`,
    [table.name],
  );
  const [size] = rows;
  await client.query('set max_parallel_workers_per_gather = 0');
  const scans: number[] = [];
  for (let i = 0; i < 3; i++) scans.push(await timedMs(() => client.query(`select count(*) from ${table.name}`)));
  await client.query('reset max_parallel_workers_per_gather');
  const copy = `public.bench_copy_${table.name}`;
  const copyMs = await timedMs(() => client.query(`create table ${copy} as select * from ${table.name}`));
  await settle(client, copy);
  const indexMs = await timedMs(() => client.query(`create index on ${copy} (${table.idColumn})`));
  await client.query(`drop table ${copy}`);
  return {
    name: table.name,
    rows: Number(size.n),
    heapMb: Number(size.heap) / 1048576,
    totalMb: Number(size.total) / 1048576,
    scanMs: Math.min(...scans),
    copyMs,
    indexMs,
  };
}

/**
 * Inserts a row every WRITER_PAUSE_MS on its own connection until stopped; resolves with its slowest
 * insert, how many it made and why any failed.
 */
function startWriter(url: string, insert: string): { stop(): Promise<WriterFigures> } {
  return runUntilStopped(async (stopped) => {
    const latencies: number[] = [];
    const failures: string[] = [];
    const client = new pg.Client({ connectionString: url, application_name: 'bench writer' });
    await client.connect();
    try {
      for (let i = 1; !stopped(); i++) {
        const started = performance.now();
        try {
          await client.query(insert, [i]);
        } catch (err) {
          failures.push(err instanceof Error ? err.message : String(err));
        }
        latencies.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, WRITER_PAUSE_MS));
      }
    } finally {
      await client.end();
    }
    return { writerLongestMs: Math.max(0, ...latencies), writerInserts: latencies.length, writerFailures: failures };
  });
}

/** When the conversion's `up` started (performance.now()) and how long it took, ms. */
interface UpTimes {
  upStartedAt: number;
  upMs: number;
}

/** The migrations before `key`, and those up to it with its `up` timed on its own. */
function migrationsAround(
  conversion: Conversion,
  times: UpTimes,
): { before: Record<string, Migration>; through: Record<string, Migration> } {
  const entries = Object.entries(conversion.migrations);
  const before = Object.fromEntries(entries.filter(([name]) => name < conversion.key));
  const own = conversion.migrations[conversion.key];
  if (!own) throw new Error(`no migration ${conversion.key} in schema ${conversion.schema}`);
  const timedOwn: Migration = {
    async up(db) {
      times.upStartedAt = performance.now();
      await own.up(db);
      times.upMs = performance.now() - times.upStartedAt;
    },
  };
  return { before, through: { ...before, [conversion.key]: timedOwn } };
}

/** Applies the conversion alone (the migrations before it applied already) under a writer. */
async function convertUnderWriter(
  db: Kysely<unknown>,
  url: string,
  conversion: Conversion,
  through: Record<string, Migration>,
  times: UpTimes,
): Promise<ConversionFigures & WriterFigures> {
  const writer = startWriter(url, conversion.writerInsert);
  try {
    await new Promise((r) => setTimeout(r, WRITER_MARGIN_MS));
    const migrateMs = await timedMs(() => migrateToLatest(db, conversion.schema, through));
    const holdMs = performance.now() - times.upStartedAt;
    await new Promise((r) => setTimeout(r, WRITER_MARGIN_MS));
    return { migrateMs, holdMs, upMs: times.upMs, ...(await writer.stop()) };
  } catch (err) {
    await writer.stop().catch(() => undefined);
    throw err;
  }
}

/** One conversion in its own database, dropped at the end: its tables' figures and the conversion's. */
async function measure(
  conversion: Conversion,
  rows: number,
): Promise<{ server: string; tables: TableFigures[]; conversion: ConversionFigures & WriterFigures }> {
  const database = await createTestDatabase();
  const db = createDatabase<unknown>({ url: database.url, schema: conversion.schema, poolSize: 2 });
  const client = new pg.Client({ connectionString: database.url, application_name: 'bench conversion-locks' });
  try {
    const times: UpTimes = { upStartedAt: NaN, upMs: NaN };
    const { before, through } = migrationsAround(conversion, times);
    await migrateToLatest(db, conversion.schema, before);
    await client.connect();
    await client.query(`set search_path = ${conversion.schema}`);
    const server = await serverLine(client);
    const seedMs = await timedMs(async () => {
      await conversion.seed(client, rows);
      for (const index of conversion.previousOnlineIndexes) await client.query(index);
    });
    for (const table of conversion.tables) await settle(client, table.name);
    console.log(`  ${conversion.key}: seeded in ${fmt(seedMs / 1000, 1)} s; baselines...`);
    const tables: TableFigures[] = [];
    for (const table of conversion.tables) tables.push(await baseline(client, table));
    await client.query('checkpoint');
    console.log(`  ${conversion.key}: converting under a writer...`);
    const figures = await convertUnderWriter(db, database.url, conversion, through, times);
    return { server, tables, conversion: figures };
  } finally {
    await client.end().catch(() => undefined);
    await db.destroy();
    await database.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// The report

/** One conversion's figures, for the report. */
interface Result {
  conversion: Conversion;
  tables: TableFigures[];
  figures: ConversionFigures & WriterFigures;
}

/** Cells padded into columns: the first left-aligned, the others right-aligned. */
function columns(cells: string[], first = 46, rest = 14): string {
  return `  ${cells[0].padEnd(first)}${cells
    .slice(1)
    .map((c) => c.padStart(rest))
    .join('')}`;
}

function tableLines(figures: TableFigures[]): string[] {
  return [
    columns(['  table', 'rows', 'heap MB', 'with idx MB', 'scan ms', 'copy ms', 'idx on id ms']),
    ...figures.map((t) =>
      columns([
        `  ${t.name}`,
        fmt(t.rows),
        fmt(t.heapMb),
        fmt(t.totalMb),
        fmt(t.scanMs),
        fmt(t.copyMs),
        fmt(t.indexMs),
      ]),
    ),
  ];
}

function conversionLines(tables: TableFigures[], c: ConversionFigures & WriterFigures): string[] {
  const lines = [
    `    lock held (the lock statement to the commit, at most): ${fmt(c.holdMs)} ms, of it up() ${fmt(c.upMs)} ms; migrateToLatest's whole call ${fmt(c.migrateMs)} ms`,
    `    the writer's slowest insert: ${fmt(c.writerLongestMs)} ms (${fmt(c.writerInserts)} inserts, one every ${WRITER_PAUSE_MS} ms, ${c.writerFailures.length} failed)`,
    `    = ${fmt(c.holdMs / sum(tables, 'scanMs'), 1)} scans of ${tables.map((t) => t.name).join(' + ')}, ${fmt(c.holdMs / sum(tables, 'indexMs'), 1)} index builds on id`,
  ];
  for (const failure of [...new Set(c.writerFailures)].slice(0, 3)) lines.push(`    writer failure: ${failure}`);
  return lines;
}

const sum = (tables: TableFigures[], field: 'scanMs' | 'indexMs' | 'heapMb') =>
  tables.reduce((total, t) => total + t[field], 0);

/** One line per conversion: its tables' size, the lock's hold, the writer's stall, and the hold in scans and index builds. */
function summaryLines(results: Result[]): string[] {
  return [
    columns(['conversion', 'rows', 'heap MB', 'lock held ms', 'writer ms', 'x scan', 'x index on id']),
    ...results.map(({ conversion, tables, figures }) =>
      columns([
        `${conversion.schema} ${conversion.key}`,
        tables.map((t) => fmt(t.rows / 1000) + 'k').join('+'),
        fmt(sum(tables, 'heapMb')),
        fmt(figures.holdMs),
        fmt(figures.writerLongestMs),
        fmt(figures.holdMs / sum(tables, 'scanMs'), 1),
        fmt(figures.holdMs / sum(tables, 'indexMs'), 1),
      ]),
    ),
  ];
}

/** The server's version and the settings an index build and a scan depend on, read on the bench's connection. */
async function serverLine(client: pg.Client): Promise<string> {
  const { rows } = await client.query<{ v: string; sb: string; mwm: string; pmw: string }>(
    `select current_setting('server_version') as v, current_setting('shared_buffers') as sb,
      current_setting('maintenance_work_mem') as mwm, current_setting('max_parallel_maintenance_workers') as pmw`,
  );
  const [s] = rows;
  return `Postgres ${s.v}, shared_buffers ${s.sb}, maintenance_work_mem ${s.mwm}, max_parallel_maintenance_workers ${s.pmw}`;
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const opts = options();
  const chosen = CONVERSIONS.filter((c) => !opts.only || opts.only.some((o) => c.key.startsWith(o)));
  console.log(`conversion-locks: ${fmt(opts.rows)} rows per converted table (attempts 2 per event)`);
  console.log(`  load average at start: ${load()}`);
  const results: Result[] = [];
  const details: string[] = [];
  const servers = new Set<string>();
  for (const conversion of chosen) {
    const { server, tables, conversion: figures } = await measure(conversion, opts.rows);
    servers.add(server);
    results.push({ conversion, tables, figures });
    details.push(
      `  ${conversion.schema} ${conversion.key} (load average after it: ${load()})`,
      ...tableLines(tables),
      ...conversionLines(tables, figures),
    );
  }
  console.log('');
  for (const line of [...servers, ...details, '', ...summaryLines(results)]) console.log(line);
}

runBench(main);
