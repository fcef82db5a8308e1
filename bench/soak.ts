/**
 * bench/soak: the database after months at 10 million charges a day, on this machine. A new database
 * is migrated by today's code (every schema the soak reads), seeded with generate_series (one
 * INSERT ... SELECT per day of data, so each lands in one partition) with 5 million receivables and
 * their state history and provider events, and 10 million callback events and 10 million delivery
 * attempts, spread over 4 months of partitions; then ANALYZE, and each of these is timed many times
 * (p50/p99) beside bare round trips measured in the same run:
 *   - the callback queue: ingest, claim a batch, record the attempts and settle (callback-svc's EventStore);
 *   - search, first page, and consult by id (receivables-svc's searchReceivables, consultReceivable);
 *   - a metrics scrape of receivables-svc and of callback-svc (their registries, as /metrics builds them);
 *   - dropping the month past retention (libs/db maintainPartitions with today's clock) while a writer
 *     ingests callback events into the live partition, with the writer's slowest insert meanwhile.
 *
 * Flags (defaults: the figures above): --receivables N, --events N, --attempts N, --months N, --runs N,
 * --database URL (measure a database seeded by an earlier run, as printed; no seeding), --seed
 * receivables,callbacks (seed these schemas again in it), --keep (do not drop the database at the
 * end, to measure it again; the month dropped last stays dropped), --seed-only (seed, print the sizes
 * and keep the database: the seed takes most of an hour at full size, and the measures want a quiet
 * machine, which may come later), --finish receivables,callbacks (with --database: complete a seed
 * cut short after its rows, from its online indexes on). A small run checks the bench in a minute:
 *   npx tsx bench/soak.ts --receivables 20000 --events 40000 --attempts 40000 --runs 50
 */
import { randomUUID } from 'node:crypto';
import { open, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { sql, type Kysely, type Migration } from 'kysely';
import {
  createDatabase,
  createPartitionsAhead,
  createTestDatabase,
  expiredPartitions,
  listPartitions,
  maintainPartitions,
  migrateService,
  serviceDatabaseUrl,
  type OnlineIndex,
  type PartitionedTable,
  type PartitionPeriod,
} from '@payments/db';
import { createLogger } from '@payments/logger';
import { createMetricsRegistry } from '@payments/metrics';
import {
  migrations as callbackMigrations,
  onlineIndexes as callbackIndexes,
  SCHEMA as CALLBACKS,
} from '@payments/callback-svc/src/db/migrations';
import type { CallbacksDatabase } from '@payments/callback-svc/src/db/schema';
import { EventStore, type AttemptResult } from '@payments/callback-svc/src/domain/event-store';
import { callbackMetrics } from '@payments/callback-svc/src/transport/metrics';
import { DEFAULT_RETENTION_DAYS, logTables } from '@payments/callback-svc/src/db/log-tables';
import { LogUpkeep } from '@payments/callback-svc/src/db/log-upkeep';
import { DATABASE_POOL_SIZE_DEFAULT as CALLBACKS_POOL_SIZE } from '@payments/callback-svc/src/config';
import {
  migrations as receivablesMigrations,
  onlineIndexes as receivablesIndexes,
} from '@payments/receivables-svc/src/db/migrations';
import type { ReceivablesDatabase } from '@payments/receivables-svc/src/db/schema';
import { consultReceivable, searchReceivables } from '@payments/receivables-svc/src/domain/search';
import { foldStateCounts } from '@payments/receivables-svc/src/domain/state-counts';
import { receivablesMetrics, reconciliationMetrics } from '@payments/receivables-svc/src/transport/metrics';
import { stuckRegistrationMetrics } from '@payments/receivables-svc/src/transport/stuck-metrics';
import { fmt, percentile, runBench } from './support';

const RECEIVABLES = 'receivables';
const DAY_MS = 86_400_000;
/** Delivered callbacks and their attempts are kept this long (callback-svc's default retention). */
const CALLBACK_RETENTION_DAYS = DEFAULT_RETENTION_DAYS;
/** Tenants in the seed; their sizes are skewed (the first holds about a fifth of the charges). */
const TENANTS = 200;
const TIME_ZONE = 'America/Sao_Paulo';

interface Options {
  receivables: number;
  events: number;
  attempts: number;
  months: number;
  runs: number;
  database: string | undefined;
  /** The schemas to (re)seed; by default both in a new database, none in --database. */
  seed: string[] | undefined;
  keep: boolean;
  seedOnly: boolean;
  /** The schemas whose seed to complete (online indexes, ANALYZE, after) in --database. */
  finish: string[] | undefined;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      receivables: { type: 'string', default: '5000000' },
      events: { type: 'string', default: '10000000' },
      attempts: { type: 'string', default: '10000000' },
      months: { type: 'string', default: '4' },
      runs: { type: 'string', default: '300' },
      database: { type: 'string' },
      seed: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'seed-only': { type: 'boolean', default: false },
      finish: { type: 'string' },
    },
  });
  return {
    receivables: Number(values.receivables),
    events: Number(values.events),
    attempts: Number(values.attempts),
    months: Number(values.months),
    runs: Number(values.runs),
    database: values.database,
    seed: values.seed?.split(','),
    keep: values.keep || values['seed-only'],
    seedOnly: values['seed-only'],
    finish: values.finish?.split(','),
  };
}

const logger = createLogger('soak', 'warn');

/** What one timed operation took over its runs, ms, sorted. */
interface Timing {
  name: string;
  samples: number[];
  target?: string;
}

async function timed(runs: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn(i);
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b);
}

// ---------------------------------------------------------------------------------------------
// The seeded database

/**
 * The seed's values, as SQL functions of a row's number (inlined by the planner, so a seeding
 * statement is one scan of generate_series): the tenant, ids and state of receivable i.
 */
const SEED_FUNCTIONS = `
create schema if not exists soak;
-- A number in [0, 1) from i, the same for the same i in every table.
create or replace function soak.unit(i bigint, salt int) returns float8 language sql immutable parallel safe
  as $$ select ((hashint8(i + salt::bigint * 1000000007) & 2147483647)::float8 / 2147483648) $$;
create or replace function soak.tenant_no(i bigint) returns int language sql immutable parallel safe
  as $$ select floor(${TENANTS} * power(soak.unit(i, 1), 3))::int $$;
create or replace function soak.tenant(i bigint) returns uuid language sql immutable parallel safe
  as $$ select ('00000000-0000-4000-8000-' || lpad(to_hex(soak.tenant_no(i)), 12, '0'))::uuid $$;
create or replace function soak.id(kind text, i bigint) returns uuid language sql immutable parallel safe
  as $$ select md5(kind || i)::uuid $$;
-- 80 % paid, 5 % cancelled, 1 % rejected, the rest open.
create or replace function soak.state(i bigint) returns text language sql immutable parallel safe
  as $$ select case when u < 0.80 then 'approved' when u < 0.85 then 'cancelled' when u < 0.86 then 'rejected' else 'pending' end
        from (select soak.unit(i, 2) as u) x $$;
-- Uncompressible text of about n characters (Postgres compresses a row only past about 2 KB).
create or replace function soak.noise(i bigint, n int) returns text language sql immutable parallel safe
  as $$ select left(string_agg(md5(i::text || ':' || k), ''), n) from generate_series(1, (n + 31) / 32) k $$;
`;

/** The period of a partitioned table, from its partitions' names (`_p202611` or `_p20261128`). */
async function periodOf(db: Kysely<unknown>, schema: string, table: string): Promise<PartitionPeriod> {
  const parts = await listPartitions(db, schema, table);
  return parts.some((p) => /_p\d{8}$/.test(p.name)) ? 'day' : 'month';
}

async function partitionedTables(db: Kysely<unknown>, schema: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_partitioned_table p join pg_class c on c.oid = p.partrelid
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and not c.relispartition order by 1`.execute(db);
  return rows.map((r) => r.name);
}

/**
 * The partitions the seed spreads over, from `from` until after today, as months of running would
 * have left them. The migrations' partitions, all empty in a new database, are dropped first: a
 * table converted in place keeps its old rows in one partition up to the conversion, which months
 * later is past its retention and gone, and the current period's then starts at the conversion.
 */
async function preparePartitions(db: Kysely<unknown>, schema: string, from: Date): Promise<string[]> {
  const tables: string[] = [];
  for (const table of await partitionedTables(db, schema)) {
    const period = await periodOf(db, schema, table);
    for (const p of await listPartitions(db, schema, table)) {
      const { rows } = await sql<{ n: string }>`select count(*) as n from ${sql.table(`${schema}.${p.name}`)}`.execute(
        db,
      );
      if (Number(rows[0]?.n) > 0) continue;
      await sql`alter table ${sql.table(`${schema}.${table}`)} detach partition ${sql.table(`${schema}.${p.name}`)}`.execute(
        db,
      );
      await sql`drop table ${sql.table(`${schema}.${p.name}`)}`.execute(db);
    }
    const days = Math.ceil((Date.now() - from.getTime()) / DAY_MS);
    const ahead = period === 'day' ? days + 3 : Math.ceil(days / 28) + 2;
    await createPartitionsAhead(db, schema, { table, period, ahead }, from);
    tables.push(`${schema}.${table} (${period})`);
  }
  return tables;
}

/**
 * One table's seed: `select` yields its rows for the row numbers g in [$1, $2) of `rows`, in time
 * order; run one day of data at a time. With `rows` 0, `select` is a whole statement run once,
 * with the table's triggers off.
 */
interface SeedPlan {
  table: string;
  rows: number;
  columns: string;
  select: string;
}

function seedPlans(o: Options, days: number, spanStart: Date): SeedPlan[] {
  const R = o.receivables;
  const E = o.events;
  const A = o.attempts;
  const spanSeconds = days * 86_400;
  const startEpoch = spanStart.getTime() / 1000;
  // Time of row g of n, spread evenly over the span.
  const timeOf = (n: number, g = 'g') => `to_timestamp(${startEpoch} + (${g} + 0.5) * ${spanSeconds}::float8 / ${n})`;
  // The receivable a row of a table of n rows belongs to (rows in time order, receivables too).
  const receivableOf = (n: number) => `floor(g::float8 * ${R} / ${n})::bigint`;
  const paidAt = `(r_at + make_interval(days => 1 + floor(soak.unit(i, 3) * 20)::int, secs => floor(soak.unit(i, 4) * 36000)::int))`;
  return [
    {
      table: `${RECEIVABLES}.receivables`,
      rows: R,
      columns: `id, tenant_id, account_receivable_id, account_receivable_id_as_sent, client_id, client_id_as_sent,
        payment_slip_id, payment_slip_id_as_sent, payment_method, url_callback, emission_date, due_date, amount_cents,
        discount_type, fine_bp, interest_cents_per_day, items, payer, client_name, state, registration_status,
        provider_charge_id, our_number, barcode, typeable_line, pix_copy_and_paste, qrcode_image_url, pdf_url,
        payment_date, amount_paid_cents, fee_cents, payment_type, created_at, updated_at, registered_at`,
      select: `
        select soak.id('r', i), soak.tenant(i), soak.id('erp', i), soak.id('erp', i)::text,
          soak.id('client', i % 50000), soak.id('client', i % 50000)::text, soak.id('slip', i), soak.id('slip', i)::text,
          case when i % 3 = 0 then 3 else 1 end, 'https://erp' || soak.tenant_no(i) || '.example.com.br/webhooks/cobranca',
          r_at::date, r_at::date + 3 + (i % 28)::int, 1000 + (hashint8(i) & 65535) * 7, 'none', 200, 33, items, payer,
          'Cliente ' || (i % 50000), soak.state(i), case when soak.state(i) = 'rejected' then 'rejected' else 'registered' end,
          'sbx-' || md5('charge' || i), lpad((i % 10000000000)::text, 11, '0'),
          '0339' || lpad((i % 10000000000)::text, 40, '7'), '03399' || lpad((i % 10000000000)::text, 42, '1'),
          '00020101021226890014br.gov.bcb.pix2567pix.example.com.br/qr/v2/cobv/' || md5('pix' || i) || '5204000053039865802BR5913BENEFICIARIO6009SAO PAULO62070503***6304' || left(md5('crc' || i), 4),
          'https://pay.example.com.br/qrcode/' || md5('qr' || i) || '.png', 'https://pay.example.com.br/slips/' || md5('pdf' || i) || '.pdf',
          case when soak.state(i) = 'approved' then ${paidAt} end,
          case when soak.state(i) = 'approved' then 1000 + (hashint8(i) & 65535) * 7 end,
          case when soak.state(i) = 'approved' then 150 end,
          case when soak.state(i) = 'approved' then (case when i % 3 = 0 then 'pix' else 'bank_slip' end) else 'undefined' end,
          r_at, greatest(r_at, coalesce(case when soak.state(i) = 'approved' then ${paidAt} end, r_at)), r_at + interval '2 seconds'
        from (select g as i, ${timeOf(R)} as r_at,
          jsonb_build_array(jsonb_build_object('description', 'Mensalidade ' || g % 12, 'quantity', 1, 'price_cents', 1000 + (hashint8(g) & 65535) * 7)) as items,
          jsonb_build_object('clientId', soak.id('client', g % 50000), 'name', 'Cliente ' || (g % 50000), 'taxId', '529.982.247-25',
            'address', 'Rua das Flores', 'number', (g % 900)::text, 'neighborhood', 'Centro', 'city', 'Sao Paulo', 'state', 'SP',
            'zipCode', '01001-000', 'email', 'cliente' || (g % 50000) || '@example.com.br') as payer
          from generate_series($1::bigint, $2::bigint - 1) g) x`,
    },
    {
      // The creation of every receivable, and the change of those no longer open (about 1.9 a charge).
      table: `${RECEIVABLES}.state_history`,
      rows: 2 * R,
      columns: 'receivable_id, tenant_id, from_state, to_state, reason, at',
      select: `
        select soak.id('r', i), soak.tenant(i), case when n = 1 then 'pending' end,
          case when n = 0 then 'pending' else soak.state(i) end,
          case when n = 0 then 'created' when soak.state(i) = 'approved' then 'payment' else 'provider' end,
          case when n = 0 then r_at else least(${paidAt}, now()) end
        from (select g / 2 as i, g % 2 as n, ${timeOf(R, 'g / 2')} as r_at from generate_series($1::bigint, $2::bigint - 1) g) x
        where n = 0 or soak.state(i) <> 'pending'`,
    },
    {
      table: `${RECEIVABLES}.provider_events`,
      rows: R,
      columns: 'event_id, received_at, provider_account_id',
      select: `
        select 'sbx-pay-' || md5('pe' || i), least(${paidAt}, now()), soak.id('account', soak.tenant_no(i))
        from (select g as i, ${timeOf(R)} as r_at from generate_series($1::bigint, $2::bigint - 1) g) x
        where soak.state(i) = 'approved'`,
    },
    {
      // The delivery log: two callbacks a receivable (registered, then paid or cancelled), about 1 KB
      // each; delivered but for 0.5 % dead and, in the last two days, 0.1 % waiting for a retry.
      table: `${CALLBACKS}.event_log`,
      rows: E,
      columns: `event_id, tenant_id, event_type, url, target_host, body, status, attempt_count, failures_in_run,
        next_attempt_at, created_at, delivered_at, dead_at, receivable_id`,
      select: `
        select 'evt_' || soak.id('evt', g), soak.tenant(i), 'receivable.' || kind,
          'https://erp' || soak.tenant_no(i) || '.example.com.br/webhooks/cobranca', 'erp' || soak.tenant_no(i) || '.example.com.br',
          '{"accounts_receivable_id":"' || soak.id('erp', i) || '","status":"' || kind || '","our_number":"' || lpad((i % 10000000000)::text, 11, '0')
            || '","typeable_line":"03399' || lpad((i % 10000000000)::text, 42, '1') || '","barcode":"0339' || lpad((i % 10000000000)::text, 40, '7')
            || '","pix_copy_and_paste":"00020101021226890014br.gov.bcb.pix2567pix.example.com.br/qr/v2/cobv/' || md5('pix' || i)
            || '","qrcode_image":"https://pay.example.com.br/qrcode/' || md5('qr' || i) || '.png","pdf":"https://pay.example.com.br/slips/'
            || md5('pdf' || i) || '.pdf?sig=' || soak.noise(g, 330) || '","amount_due":' || (1000 + (hashint8(i) & 65535) * 7) / 100.0 || '}',
          st, case st when 'dead' then 12 when 'pending' then 3 else 1 end, case st when 'dead' then 12 when 'pending' then 3 else 0 end,
          case when st = 'pending' then now() + make_interval(secs => 60 + g % 3600) end, at,
          case when st = 'delivered' then at + interval '180 milliseconds' end, case when st = 'dead' then at + interval '2 days' end, soak.id('r', i)
        from (select *, case when g % 200 = 7 then 'dead' when g % 1000 = 3 and at > now() - interval '2 days' then 'pending' else 'delivered' end as st
          from (select g, ${receivableOf(E)} as i, ${timeOf(E)} as at, case when g % 2 = 0 then 'registered' else 'paid' end as kind
            from generate_series($1::bigint, $2::bigint - 1) g) y) x`,
    },
    {
      // Each event's day, by id.
      table: `${CALLBACKS}.event_keys`,
      rows: E,
      columns: 'event_id, created_at',
      select: `select 'evt_' || soak.id('evt', g), ${timeOf(E)} from generate_series($1::bigint, $2::bigint - 1) g`,
    },
    {
      table: `${CALLBACKS}.attempts`,
      rows: A,
      columns: 'event_id, tenant_id, attempted_at, status_code, error, duration_ms, response_excerpt, target_host',
      select: `
        select 'evt_' || soak.id('evt', e), soak.tenant(r), at + interval '100 milliseconds',
          case when e % 200 = 7 then 503 else 200 end, case when e % 200 = 7 then 'HTTP 503' end,
          20 + (hashint8(g) & 255)::int, case when e % 200 = 7 then 'Service Unavailable' else '{"ok":true}' end,
          'erp' || soak.tenant_no(r) || '.example.com.br'
        from (select g, e, floor(e::float8 * ${R} / ${E})::bigint as r, at
          from (select g, floor(g::float8 * ${E} / ${A})::bigint as e, ${timeOf(A)} as at from generate_series($1::bigint, $2::bigint - 1) g) y) x`,
    },
    {
      // The queue holds what is owed: the dead and the waiting, copied from the log once (with the
      // triggers that log an event entering the queue off for this session: they are logged already).
      table: `${CALLBACKS}.events`,
      rows: 0,
      columns: '',
      select: `insert into ${CALLBACKS}.events select * from ${CALLBACKS}.event_log where status <> 'delivered'`,
    },
  ];
}

/** Inserts a plan's rows one day of data at a time; the seconds it took. */
async function seedTable(client: pg.Client, plan: SeedPlan, days: number): Promise<number> {
  const started = performance.now();
  if (plan.rows === 0) {
    await client.query('set session_replication_role = replica');
    await client.query(plan.select);
    await client.query('set session_replication_role = origin');
    return (performance.now() - started) / 1000;
  }
  for (let d = 0; d < days; d++) {
    const lo = Math.floor((plan.rows * d) / days);
    const hi = Math.floor((plan.rows * (d + 1)) / days);
    if (hi > lo)
      await client.query(`insert into ${plan.table} (${plan.columns}) ${plan.select}`, [String(lo), String(hi)]);
  }
  return (performance.now() - started) / 1000;
}

/**
 * A table's indexes that back no constraint, as statements that make them again. A bulk load is
 * faster into the keys alone with these built once after it (sorted, not one random insert a row);
 * an index of a partitioned table is made again on the parent, and so on every partition.
 */
async function secondaryIndexes(client: pg.Client, table: string): Promise<Array<{ name: string; def: string }>> {
  const { rows } = await client.query<{ name: string; def: string }>(
    `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as def from pg_index i
     where i.indrelid = $1::regclass and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`,
    [table],
  );
  return rows.map((r) => ({ name: r.name, def: r.def.replace(' ON ONLY ', ' ON ') }));
}

/** What a schema's seed is: the app's migrations and online indexes, its tables' rows, and what follows. */
interface SchemaSeed {
  schema: string;
  migrations: Record<string, Migration>;
  onlineIndexes: readonly OnlineIndex[];
  plans: SeedPlan[];
  /** Run as the service's role after the migrations, before the rows. */
  before?: (db: Kysely<unknown>) => Promise<void>;
  /** Run as the service's role after the rows are in (e.g. folding the state counters the triggers appended). */
  after?: (db: Kysely<unknown>) => Promise<string>;
}

function schemaSeeds(o: Options, days: number, spanStart: Date): Record<string, SchemaSeed> {
  const plans = seedPlans(o, days, spanStart);
  const of = (schema: string) => plans.filter((p) => p.table.startsWith(`${schema}.`));
  return {
    [RECEIVABLES]: {
      schema: RECEIVABLES,
      migrations: receivablesMigrations,
      onlineIndexes: receivablesIndexes,
      plans: of(RECEIVABLES),
      after: async (db) =>
        `state counters folded: ${fmt(await foldStateCounts(db as unknown as Kysely<ReceivablesDatabase>))} changes`,
    },
    [CALLBACKS]: {
      schema: CALLBACKS,
      migrations: callbackMigrations,
      onlineIndexes: callbackIndexes,
      plans: of(CALLBACKS),
      // The log was split from the queue when the seeded months began (migration 0009 names that
      // time in log_converted_at()): ingest probes only the days before it for ids logged without a
      // key, and months later those days are past the retention and gone. Made today, every seeded
      // day would be before it, and each ingest would scan them all.
      before: async (db) => {
        await sql`create or replace function log_converted_at() returns timestamptz language sql immutable
          as $$ select ${sql.lit(spanStart.toISOString())}::timestamptz $$`.execute(db);
      },
    },
  };
}

/**
 * Migrates one schema as \`npm run migrate\` does (its role, its settings), lays out its partitions
 * as the service's role (which owns them, and drops them later), then loads its rows as the
 * superuser, with the secondary indexes built after, its online indexes, and ANALYZE. A schema
 * already there is dropped first (--seed on an earlier run's database). Prints as it goes.
 */
async function seedSchema(url: string, seedOf: SchemaSeed, days: number, spanStart: Date): Promise<void> {
  const say = (line: string) => console.log(`  ${line}`);
  const started = performance.now();
  const client = new pg.Client({ connectionString: url, application_name: `soak seed ${seedOf.schema}` });
  await client.connect();
  const roleDb = createDatabase<unknown>({
    url: serviceDatabaseUrl(url, seedOf.schema),
    schema: seedOf.schema,
    poolSize: 2,
  });
  try {
    await client.query(`drop schema if exists ${seedOf.schema} cascade`);
    await migrateService({ url, schema: seedOf.schema, migrations: seedOf.migrations, onlineIndexes: [] });
    const tables = await preparePartitions(roleDb, seedOf.schema, spanStart);
    await seedOf.before?.(roleDb);
    say(`${seedOf.schema}: migrated; partitioned: ${tables.length > 0 ? tables.join(', ') : 'none'}`);
    // A seed is one client's bulk load: no wait for each statement's WAL flush (this machine's is slow).
    await client.query('set synchronous_commit = off');
    await client.query("set maintenance_work_mem = '256MB'");
    for (const plan of seedOf.plans) {
      const indexes = await secondaryIndexes(client, plan.table);
      for (const index of indexes) await client.query(`drop index ${index.name}`);
      const seconds = await seedTable(client, plan, days);
      const indexStarted = performance.now();
      for (const index of indexes) await client.query(index.def);
      const indexSeconds = (performance.now() - indexStarted) / 1000;
      const { rows } = await client.query<{ n: string }>(`select count(*) as n from ${plan.table}`);
      const n = Number(rows[0]?.n);
      say(
        `${plan.table}: ${fmt(n)} rows in ${fmt(seconds, 1)} s (${fmt(n / Math.max(seconds, 0.001))} rows/s, ${days} INSERT ... SELECT, one a day), then its ${indexes.length} secondary indexes in ${fmt(indexSeconds, 1)} s`,
      );
    }
    await finishSchema(url, seedOf, client, roleDb);
    say(`${seedOf.schema}: seeded in ${fmt((performance.now() - started) / 1000, 1)} s in all`);
  } finally {
    await roleDb.destroy();
    await client.end();
  }
}

/**
 * What follows the rows: the online indexes, built as `npm run migrate` builds them (its own
 * connection, no statement timeout: on millions of rows a build outlasts the role's), ANALYZE, and
 * the schema's `after`. Each step is idempotent, so --finish completes a seed cut short after its rows.
 */
async function finishSchema(
  url: string,
  seedOf: SchemaSeed,
  client: pg.Client,
  roleDb: Kysely<unknown>,
): Promise<void> {
  const say = (line: string) => console.log(`  ${line}`);
  const onlineStarted = performance.now();
  await migrateService({
    url,
    schema: seedOf.schema,
    migrations: seedOf.migrations,
    onlineIndexes: seedOf.onlineIndexes,
  });
  const analyzeStarted = performance.now();
  for (const plan of seedOf.plans) await client.query(`analyze ${plan.table}`);
  say(
    `${seedOf.schema}: online indexes ${fmt((analyzeStarted - onlineStarted) / 1000, 1)} s, ANALYZE ${fmt((performance.now() - analyzeStarted) / 1000, 1)} s`,
  );
  if (seedOf.after) say(`${seedOf.schema}: ${await seedOf.after(roleDb)}`);
}

/** The days the seed spans (--months of them) and the first one's start, ending today. */
function seedSpan(o: Options): { days: number; spanStart: Date } {
  const days = Math.round((o.months * 365.25) / 12);
  return { days, spanStart: new Date(Date.now() - days * DAY_MS) };
}

/** --finish: completes the seed of `schemas` in an earlier run's database, from its online indexes on. */
async function finishSeeds(o: Options, url: string, schemas: string[]): Promise<void> {
  const { days, spanStart } = seedSpan(o);
  const seeds = schemaSeeds(o, days, spanStart);
  for (const schema of schemas) {
    const seedOf = seeds[schema];
    if (!seedOf) throw new Error(`--finish ${schema}: the soak seeds ${Object.keys(seeds).join(', ')}`);
    const client = new pg.Client({ connectionString: url, application_name: `soak finish ${schema}` });
    await client.connect();
    const roleDb = createDatabase<unknown>({ url: serviceDatabaseUrl(url, schema), schema, poolSize: 1 });
    try {
      await finishSchema(url, seedOf, client, roleDb);
    } finally {
      await roleDb.destroy();
      await client.end();
    }
  }
}

interface Seeded {
  url: string;
  drop: (() => Promise<void>) | undefined;
}

/** A new database (or --database), its --seed schemas seeded side by side on two connections. */
async function seed(o: Options): Promise<Seeded> {
  const database = o.database ? undefined : await createTestDatabase();
  const url = o.database ?? database?.url ?? '';
  const schemas = o.seed ?? (o.database ? [] : [RECEIVABLES, CALLBACKS]);
  console.log(`\nbench/soak: ${url}`);
  if (o.database && o.finish) await finishSeeds(o, url, o.finish);
  if (schemas.length === 0) return { url, drop: undefined };
  const started = performance.now();
  const { days, spanStart } = seedSpan(o);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(SEED_FUNCTIONS).finally(() => client.end());
  const seeds = schemaSeeds(o, days, spanStart);
  await Promise.all(
    schemas.map((schema) => {
      const seedOf = seeds[schema];
      if (!seedOf) throw new Error(`--seed ${schema}: the soak seeds ${Object.keys(seeds).join(', ')}`);
      return seedSchema(url, seedOf, days, spanStart);
    }),
  );
  console.log(
    `  seeding in all (${schemas.join(' and ')} side by side): ${fmt((performance.now() - started) / 1000, 1)} s`,
  );
  return { url, drop: database?.drop };
}

// ---------------------------------------------------------------------------------------------
// The measures

/** Bare round trips in the same run: `select 1`, and a primary-key lookup on a one-row table. */
async function baselines(url: string, runs: number): Promise<Timing[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('create table if not exists soak.one (id int primary key, v text)');
    await client.query("insert into soak.one values (1, 'x') on conflict do nothing");
    const select1 = await timed(runs, () => client.query('select 1'));
    const lookup = await timed(runs, () => client.query('select v from soak.one where id = $1', [1]));
    // What a write costs here before any work: one committed update of one row (a WAL flush).
    const commit = await timed(runs, (i) => client.query('update soak.one set v = $1 where id = 1', [String(i)]));
    return [
      { name: 'baseline: select 1', samples: select1 },
      { name: 'baseline: primary-key lookup, 1-row table', samples: lookup },
      { name: 'baseline: one-row update, committed', samples: commit },
    ];
  } finally {
    await client.end();
  }
}

const DELIVERED = {
  ok: true,
  statusCode: 200,
  error: null,
  durationMs: 25,
  responseExcerpt: '{"ok":true}',
  retryAfterMs: null,
  refused: false,
} as const;

function newEvents(count: number, tenantNo: number) {
  const tenantId = `00000000-0000-4000-8000-${tenantNo.toString(16).padStart(12, '0')}`;
  return Array.from({ length: count }, () => ({
    eventId: `evt_${randomUUID()}`,
    tenantId,
    eventType: 'receivable.registered',
    url: `https://erp${tenantNo}.example.com.br/webhooks/cobranca`,
    body: `{"accounts_receivable_id":"${randomUUID()}","status":"registered","pad":"${'x'.repeat(900)}"}`,
    receivableId: randomUUID(),
  }));
}

/**
 * The delivery path, as callback-svc's workers run it: new events arrive (ingest, unclaimed), a
 * worker claims a batch of due ones, delivers them (not timed: HTTP) and records the attempts,
 * settling the events, in one transaction.
 */
async function callbackQueue(db: Kysely<CallbacksDatabase>, runs: number, batch: number): Promise<Timing[]> {
  const store = new EventStore(db);
  const room = {
    left: new Map<string, number>(),
    perHost: batch,
    tenantLeft: new Map<string, number>(),
    perTenant: batch,
  };
  const ingest: number[] = [];
  const claim: number[] = [];
  const record: number[] = [];
  const cycle: number[] = [];
  let claimed = 0;
  for (let i = 0; i < runs; i++) {
    const events = newEvents(batch, i % 7);
    let t = performance.now();
    await store.ingest(events, new Set(), 30_000);
    ingest.push(performance.now() - t);
    t = performance.now();
    const taken = await store.claimDue(batch, 30_000, room);
    const afterClaim = performance.now();
    claim.push(afterClaim - t);
    claimed += taken.length;
    const results: AttemptResult[] = taken.map((event) => ({
      event,
      attemptedAt: new Date(),
      outcome: DELIVERED,
      retryAt: null,
    }));
    await store.recordAttempts(results);
    record.push(performance.now() - afterClaim);
    cycle.push(performance.now() - t);
  }
  // One event with its attempts, as GET /api/v1/callbacks/{id} reads it (its key names its day).
  const { rows: sample } = await sql<{ event_id: string; tenant_id: string }>`
    select k.event_id, l.tenant_id from (select event_id, created_at from event_keys order by random() limit 1000) k
    join event_log l on l.event_id = k.event_id and l.created_at = k.created_at`.execute(db);
  const find = await timed(runs, (i) => {
    const e = sample[i % Math.max(1, sample.length)];
    return e ? store.find(e.tenant_id, e.event_id) : Promise.resolve(undefined);
  });
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  const each = `batches of ${batch}, ${fmt(claimed / runs, 1)} claimed a batch`;
  return [
    { name: `callbacks: ingest (${each})`, samples: sorted(ingest) },
    { name: `callbacks: claim a batch`, samples: sorted(claim), target: 'p99 < 20 ms' },
    { name: `callbacks: record attempts and settle`, samples: sorted(record), target: 'p99 < 20 ms' },
    { name: `callbacks: claim + record, one cycle`, samples: sorted(cycle), target: 'p99 < 20 ms' },
    {
      name: `callbacks: one event and its attempts by id (${fmt(sample.length)} sampled)`,
      samples: find,
      target: 'p99 < 100 ms',
    },
  ];
}

/** The tenants of the seed, largest first, and some of their ERP ids, for typical searches. */
async function searchSubjects(db: Kysely<unknown>): Promise<{ tenants: string[]; ids: Array<[string, string]> }> {
  const { rows } = await sql<{ tenant_id: string }>`
    select tenant_id from receivables.receivables group by 1 order by count(*) desc limit 20`.execute(db);
  const sample = await sql<{ tenant_id: string; id: string }>`
    select tenant_id, account_receivable_id as id from receivables.receivables tablesample system (0.5) limit 2000`.execute(
    db,
  );
  return { tenants: rows.map((r) => r.tenant_id), ids: sample.rows.map((r) => [r.tenant_id, r.id]) };
}

async function searches(db: Kysely<ReceivablesDatabase>, admin: Kysely<unknown>, runs: number): Promise<Timing[]> {
  const { tenants, ids } = await searchSubjects(admin);
  const today = new Date();
  const day = (daysAgo: number) => new Date(today.getTime() - daysAgo * DAY_MS).toISOString().slice(0, 10);
  const limit = 500;
  const page = (state: 'all' | 'pending', from: number, to: number) => (i: number) =>
    searchReceivables(
      db,
      tenants[i % tenants.length],
      { state, start_date: day(from), end_date: day(to) },
      limit,
      undefined,
      TIME_ZONE,
    );
  const largest = (state: 'all' | 'pending') => (i: number) =>
    searchReceivables(
      db,
      tenants[0],
      { state, start_date: day(30 + (i % 60)), end_date: day(i % 60) },
      limit,
      undefined,
      TIME_ZONE,
    );
  return [
    {
      name: `search: first page of ${limit}, last 30 days, any state (20 largest tenants)`,
      samples: await timed(runs, page('all', 30, 0)),
      target: 'p99 < 100 ms',
    },
    {
      name: `search: first page of ${limit}, last 30 days, open only`,
      samples: await timed(runs, page('pending', 30, 0)),
      target: 'p99 < 100 ms',
    },
    {
      name: `search: first page, largest tenant, a 30-day window in 4 months`,
      samples: await timed(runs, largest('all')),
      target: 'p99 < 100 ms',
    },
    {
      name: 'consult: one receivable by its ERP id',
      samples: await timed(runs, (i) => {
        const [tenant, id] = ids[i % ids.length] ?? ['', ''];
        return consultReceivable(db, tenant, id, TIME_ZONE);
      }),
      target: 'p99 < 100 ms',
    },
  ];
}

/** A scrape as /metrics builds it: a new registry each time, so no cached reading is reused. */
async function scrapes(
  receivablesDb: Kysely<ReceivablesDatabase>,
  callbacksDb: Kysely<CallbacksDatabase>,
  runs: number,
): Promise<Timing[]> {
  const store = new EventStore(callbacksDb);
  const receivablesScrape = async () => {
    const registry = createMetricsRegistry('receivables-svc');
    receivablesMetrics(registry, {
      db: receivablesDb,
      logger,
      outboxStreams: ['receivable-registrations', 'receivable-cancellations', 'callback-requests'],
    });
    stuckRegistrationMetrics(registry, { db: receivablesDb, logger });
    reconciliationMetrics(registry, { db: receivablesDb, logger, sweptKinds: ['sandbox'] });
    const text = await registry.metrics();
    registry.clear();
    return text;
  };
  const callbacksScrape = async () => {
    const registry = createMetricsRegistry('callback-svc');
    callbackMetrics({ registry, store, logger, heldCount: () => 0, failingHostCount: () => 0 });
    const text = await registry.metrics();
    registry.clear();
    return text;
  };
  // A service scrapes many times in one process; the first scrape also loads and compiles the
  // metrics code, so it is shown apart, and the target is read on the runs after it.
  const receivablesFirst = await timed(1, receivablesScrape);
  const receivables = await timed(runs, receivablesScrape);
  const callbacksFirst = await timed(1, callbacksScrape);
  const callbacks = await timed(runs, callbacksScrape);
  return [
    { name: 'metrics scrape: receivables-svc, the first in the process', samples: receivablesFirst },
    { name: 'metrics scrape: receivables-svc, after it', samples: receivables, target: '< 50 ms' },
    { name: 'metrics scrape: callback-svc, the first in the process', samples: callbacksFirst },
    { name: 'metrics scrape: callback-svc, after it', samples: callbacks, target: '< 50 ms' },
  ];
}

/**
 * The month past retention dropped as the service's maintenance drops it (maintainPartitions with
 * today's clock and the callbacks' retention, on a pool of callback-svc's default size), while a
 * writer ingests one event at a time into the live partition on its own connection.
 */
async function dropMonth(url: string): Promise<{ timings: Timing[]; lines: string[] }> {
  const tables = logTables(CALLBACK_RETENTION_DAYS);
  const roleUrl = serviceDatabaseUrl(url, CALLBACKS);
  const writerDb = createDatabase<CallbacksDatabase>({ url: roleUrl, schema: CALLBACKS, poolSize: 1 });
  // The service's own pool: its maintenance drops on several of its connections at once.
  const maintenanceDb = createDatabase<unknown>({ url: roleUrl, schema: CALLBACKS, poolSize: CALLBACKS_POOL_SIZE });
  const store = new EventStore(writerDb);
  const samples = { before: [] as number[], drop: [] as number[], keys: [] as number[] };
  // An object, so that the writer's loop reads the phase as the drop moves it on.
  const run: { phase: 'before' | 'drop' | 'keys' | 'done' } = { phase: 'before' };
  const phaseNow = () => run.phase;
  const writer = (async () => {
    let i = 0;
    while (run.phase !== 'done') {
      const started = performance.now();
      await store.ingest(newEvents(1, i++ % 7), new Set(), 30_000);
      const phase = phaseNow();
      if (phase !== 'done') samples[phase].push(performance.now() - started);
    }
  })();
  try {
    const expired = await expiredBytes(maintenanceDb, tables);
    await new Promise((r) => setTimeout(r, 2_000));
    run.phase = 'drop';
    const started = performance.now();
    const result = await maintainPartitions(maintenanceDb, CALLBACKS, tables);
    const seconds = (performance.now() - started) / 1000;
    // Then the keys of the dropped days, as the service's upkeep deletes them after the drop (one run).
    run.phase = 'keys';
    const keysStarted = performance.now();
    const keys = await new LogUpkeep(maintenanceDb as unknown as Kysely<CallbacksDatabase>).pruneKeys(
      CALLBACK_RETENTION_DAYS,
    );
    const keysSeconds = (performance.now() - keysStarted) / 1000;
    run.phase = 'done';
    await writer;
    // After the writer, whose inserts it would hold up: it writes and syncs gigabytes first.
    const bare = await freeingSeconds(expired);
    const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
    const slowest = (xs: number[]) => fmt(Math.max(0, ...xs), 1);
    return {
      timings: [
        { name: 'writer: one event ingested, before the drop', samples: sorted(samples.before) },
        { name: 'writer: one event ingested, during the drop', samples: sorted(samples.drop) },
        { name: 'writer: one event ingested, during the key deletion', samples: sorted(samples.keys) },
      ],
      lines: [
        `drop the month past ${CALLBACK_RETENTION_DAYS} days (maintainPartitions, ${tables.map((t) => `${t.table} by ${t.period}`).join(', ')}): ${fmt(seconds, 2)} s for ${result.dropped.length} partitions   (target < 1 s)`,
        `  bare: the OS alone frees the same ${fmt(expired / 2 ** 20)} MB (one file written to ${tmpdir()}, then unlinked) in ${fmt(bare, 2)} s; a dropped partition's files are freed at its commit, so this is the floor under any drop of these rows`,
        `  then the upkeep's deletion of their event keys (one run, batches of 10,000): ${fmt(keys)} keys in ${fmt(keysSeconds, 1)} s`,
        `  the writer's slowest insert: ${slowest(samples.drop)} ms during the drop (${fmt(samples.drop.length)} inserts), ${slowest(samples.keys)} ms during the key deletion (${fmt(samples.keys.length)}), ${slowest(samples.before)} ms before (${fmt(samples.before.length)})`,
      ],
    };
  } finally {
    run.phase = 'done';
    await writer.catch(() => undefined);
    await writerDb.destroy();
    await maintenanceDb.destroy();
  }
}

/** Bytes, with indexes and TOAST, of the partitions a maintenance run with today's clock drops. */
async function expiredBytes(db: Kysely<unknown>, tables: readonly PartitionedTable[]): Promise<number> {
  let bytes = 0;
  for (const table of tables) {
    for (const p of await expiredPartitions(db, CALLBACKS, table)) {
      const { rows } = await sql<{ bytes: string }>`
        select pg_total_relation_size(${`${CALLBACKS}.${p.name}`}::regclass) as bytes`.execute(db);
      bytes += Number(rows[0]?.bytes ?? 0);
    }
  }
  return bytes;
}

/**
 * Seconds the OS takes to free `bytes` of a file: written and synced first, then unlinked. Postgres
 * frees a dropped table's files at the drop's commit, so no layout of partitions drops those rows in
 * less. Written to the temporary directory, which on this machine is on Postgres's disk.
 */
async function freeingSeconds(bytes: number): Promise<number> {
  const path = join(tmpdir(), `soak-free-${randomUUID()}`);
  const chunk = Buffer.alloc(8 * 2 ** 20, 1);
  const file = await open(path, 'w');
  try {
    for (let written = 0; written < bytes; written += chunk.length) await file.write(chunk);
    await file.sync();
  } finally {
    await file.close();
  }
  const started = performance.now();
  await unlink(path);
  return (performance.now() - started) / 1000;
}

async function sizes(admin: Kysely<unknown>): Promise<string[]> {
  const { rows } = await sql<{ name: string; bytes: string; parts: string }>`
    select n.nspname || '.' || coalesce(parent.relname, c.relname) as name, sum(pg_total_relation_size(c.oid)) as bytes,
      count(*) filter (where parent.oid is not null) as parts
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    left join pg_inherits i on i.inhrelid = c.oid left join pg_class parent on parent.oid = i.inhparent and parent.relkind = 'p'
    where c.relkind = 'r' and n.nspname in (${RECEIVABLES}, ${CALLBACKS})
    group by 1 having sum(pg_total_relation_size(c.oid)) > 10000000 order by 2 desc`.execute(admin);
  return rows.map(
    (r) => `${r.name}: ${fmt(Number(r.bytes) / 1e9, 2)} GB${Number(r.parts) > 0 ? ` in ${r.parts} partitions` : ''}`,
  );
}

function table(timings: Timing[]): string[] {
  const width = Math.max(...timings.map((t) => t.name.length));
  const head = `  ${'measure'.padEnd(width)}  ${'runs'.padStart(5)}  ${'p50 ms'.padStart(8)}  ${'p99 ms'.padStart(8)}  ${'max ms'.padStart(8)}  target`;
  return [
    head,
    ...timings.map(
      (t) =>
        `  ${t.name.padEnd(width)}  ${String(t.samples.length).padStart(5)}  ${fmt(percentile(t.samples, 50), 2).padStart(8)}  ${fmt(percentile(t.samples, 99), 2).padStart(8)}  ${fmt(t.samples[t.samples.length - 1] ?? NaN, 2).padStart(8)}  ${t.target ?? ''}`,
    ),
  ];
}

async function main(): Promise<void> {
  const o = options();
  const seeded = await seed(o);
  const admin = createDatabase<unknown>({ url: seeded.url, schema: 'public', poolSize: 1 });
  // The services' own roles, as they log in (search_path and timeouts are the role's settings).
  const receivablesDb = createDatabase<ReceivablesDatabase>({
    url: serviceDatabaseUrl(seeded.url, RECEIVABLES),
    schema: RECEIVABLES,
    poolSize: 2,
  });
  const callbacksDb = createDatabase<CallbacksDatabase>({
    url: serviceDatabaseUrl(seeded.url, CALLBACKS),
    schema: CALLBACKS,
    poolSize: 2,
  });
  try {
    for (const line of await sizes(admin)) console.log(`  ${line}`);
    if (o.seedOnly) {
      console.log(`\n  seeded and kept; measure it with --database ${seeded.url}`);
      return;
    }
    const timings: Timing[] = [
      ...(await baselines(seeded.url, o.runs)),
      ...(await callbackQueue(callbacksDb, o.runs, 20)),
      ...(await searches(receivablesDb, admin, o.runs)),
      ...(await scrapes(receivablesDb, callbacksDb, Math.min(o.runs, 50))),
      ...(await baselines(seeded.url, o.runs)).map((t) => ({ ...t, name: `${t.name} (again)` })),
    ];
    console.log('');
    for (const line of table(timings)) console.log(line);
    // Last: it takes the oldest month away (a run on a kept database measures what is left).
    const drop = await dropMonth(seeded.url);
    console.log('');
    for (const line of table(drop.timings)) console.log(line);
    for (const line of drop.lines) console.log(`  ${line}`);
  } finally {
    await Promise.all([admin.destroy(), receivablesDb.destroy(), callbacksDb.destroy()]);
    if (!o.keep) await seeded.drop?.();
  }
}

runBench(main);
