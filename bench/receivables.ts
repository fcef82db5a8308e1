/**
 * bench/receivables: 20,000 charges in batches of 1,000 through the gateway, until every registered
 * callback has arrived; beside a bare INSERT of 20,000 rows like them into Postgres in the same run,
 * as intake inserts (its statement, 1,000 rows a statement) into a copy of its table (same keys and
 * indexes). Goals (2-core machine): accept at >= 40 % of the bare insert rate; end to end >= 1,000
 * charges/s and >= 10 % of the bare insert rate. It also prints, per charge, what each process did
 * (commits, statements, bus requests and publishes, outgoing HTTP, CPU ms) and what Postgres's busy
 * backends waited on. Every app runs as its own process, as `npm start` runs them.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { chargeItem } from '@payments/test-support/charge-load';
import {
  cpuSeconds,
  cpuSecondsOf,
  developmentUnlessSet,
  fmt,
  intakeStatement,
  PAID_SHARE,
  payShare,
  percentile,
  readWork,
  requestTimeLine,
  runBench,
  sampleStreamBytes,
  sampleWaits,
  startBenchSystem,
  SYSTEM_APPS,
  workPerChargeLines,
  type BenchPayer,
} from './support';

const TOTAL = Number(process.env.BENCH_CHARGES ?? 20_000);
const BATCH = 1_000;
const CONCURRENT_POSTS = Number(process.env.BENCH_CONCURRENT_POSTS ?? 2);

/** Index definitions of a table without their names: method, columns, uniqueness, predicate. */
async function indexShapes(client: pg.Client, table: string): Promise<string[]> {
  const { rows } = await client.query<{ shape: string }>(
    `select (case when i.indisprimary then 'primary ' when i.indisunique then 'unique ' else '' end)
            || regexp_replace(pg_get_indexdef(i.indexrelid), '^.* USING ', '') as shape
       from pg_index i where i.indrelid = $1::regclass order by 1`,
    [table],
  );
  return rows.map((r) => r.shape);
}

/**
 * Baseline: the same charges inserted as intake inserts them (its statement, 1,000 rows a statement,
 * one commit each, one tenant), into a copy of the service's table with all its keys, indexes,
 * constraints and defaults, and nothing else: no HTTP, bus, validation, client lookup or outbox.
 */
async function bareInsertRate(
  databaseUrl: string,
  tenantId: string,
  payer: BenchPayer,
  url: string,
): Promise<{ rate: number; indexes: string[] }> {
  const intake = intakeStatement();
  const client = new pg.Client({ connectionString: databaseUrl, options: '-c search_path=bench_bare' });
  await client.connect();
  await client.query('create schema bench_bare');
  await client.query('create table bench_bare.receivables (like receivables.receivables including all)');
  const indexes = await indexShapes(client, 'receivables.receivables');
  const copied = await indexShapes(client, 'bench_bare.receivables');
  if (JSON.stringify(copied) !== JSON.stringify(indexes))
    throw new Error(`the baseline table's indexes differ from the service's: ${copied.join('; ')}`);
  const batches = Array.from({ length: TOTAL / BATCH }, () =>
    Array.from({ length: BATCH }, (_, i) => intake.row(tenantId, chargeItem(payer.clientId, url, i), payer)),
  );
  const started = performance.now();
  for (const rows of batches) {
    const result = await client.query(intake.sql, intake.arrays(rows));
    if (result.rowCount !== BATCH) throw new Error(`inserted ${result.rowCount} of ${BATCH}`);
  }
  const rate = TOTAL / ((performance.now() - started) / 1000);
  await client.query('drop schema bench_bare cascade');
  await client.end();
  return { rate, indexes };
}

async function main(): Promise<void> {
  developmentUnlessSet();
  const system = await startBenchSystem();
  const { api, headers, clientId, payer, receiver, databaseUrl, prefix } = system;
  try {
    const bare = await bareInsertRate(databaseUrl, system.tenantId, payer, receiver.url);

    const writesBefore = await postgresWrites(databaseUrl);
    const workBefore = await readWork(system);
    const processes = SYSTEM_APPS.map((app) => system.processes.get(app)?.pid ?? 0);
    const cpuBefore = processes.map((pid) => cpuSeconds(pid));
    const pgBefore = cpuSecondsOf(/^postgres/);
    const natsBefore = cpuSecondsOf(/nats-server/);
    const selfBefore = process.cpuUsage();
    const batches = Array.from({ length: TOTAL / BATCH }, () =>
      Array.from({ length: BATCH }, (_, i) => chargeItem(clientId, receiver.url, i)),
    );
    const postedAt = new Map<string, number>();
    const waits = sampleWaits(databaseUrl);
    const streamBytes = sampleStreamBytes(prefix);
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENT_POSTS }, async () => {
        while (next < batches.length) {
          const batch = batches[next++];
          const body = JSON.stringify(batch);
          const sentAt = Date.now();
          const res = await fetch(`${api}/accounts-receivable`, {
            method: 'POST',
            headers: { ...headers, 'idempotency-key': randomUUID() },
            body,
          });
          if (res.status !== 202) throw new Error(`POST answered ${res.status}: ${await res.text()}`);
          for (const item of batch) postedAt.set(item.account_receivable_id, sentAt);
        }
      }),
    );
    const acceptedIn = (Date.now() - started) / 1000;
    await receiver.waitForEvents(TOTAL, 600_000);
    const endToEnd = (Date.now() - started) / 1000;
    // Then a payment for most charges (BENCH_PAID_SHARE): the figures below count 1.8 callbacks a charge.
    const payments = await payShare(system, PAID_SHARE, TOTAL);
    const busy = endToEnd + payments.seconds;
    const waitLines = await waits.stop();
    const bytesLines = await streamBytes.stop();
    const selfCpu = process.cpuUsage(selfBefore);
    const writes = perCharge(writesBefore, await postgresWrites(databaseUrl), TOTAL);
    const workAfter = await readWork(system);
    const bus = await streamMessagesPerCharge(prefix, TOTAL);
    const stored = await storedBytesPerCharge(databaseUrl, TOTAL);
    const cpu = [
      ...SYSTEM_APPS.map((app, i) => `${app} ${fmt(cpuSeconds(processes[i]) - cpuBefore[i], 1)}`),
      `postgres ${fmt(cpuSecondsOf(/^postgres/) - pgBefore, 1)}`,
      `nats ${fmt(cpuSecondsOf(/nats-server/) - natsBefore, 1)}`,
      `bench (client + receiver) ${fmt((selfCpu.user + selfCpu.system) / 1e6, 1)}`,
    ];

    // Callback arrival per charge, by the accounts_receivable_id in its body.
    const latencies = [...receiver.bodies.entries()]
      .map(([arId, at]) => at - (postedAt.get(arId) ?? at))
      .sort((a, b) => a - b);
    console.log('\nbench/receivables');
    console.log(
      `  bare INSERT of ${fmt(TOTAL)} rows as intake's (unnest, ${fmt(BATCH)} per statement) into a copy of receivables.receivables (${bare.indexes.length} indexes): ${fmt(bare.rate)} rows/s`,
    );
    console.log(
      `  accepted through the gateway (${fmt(TOTAL / BATCH)} POSTs of 1,000, ${CONCURRENT_POSTS} at a time): ${fmt(TOTAL / acceptedIn)} charges/s`,
    );
    console.log(
      `  ratio accepted / bare insert: ${fmt((TOTAL / acceptedIn / bare.rate) * 100, 1)} %   (target >= 40 %)`,
    );
    console.log(
      `  end to end, POST to registered callback: ${fmt(TOTAL / endToEnd)} charges/s over ${fmt(endToEnd, 1)} s   (target >= 1,000 charges/s)`,
    );
    console.log(`  ratio end to end / bare insert: ${fmt((TOTAL / endToEnd / bare.rate) * 100, 1)} %   (goal >= 10 %)`);
    console.log(
      `  time from POST to callback: p50 ${fmt(percentile(latencies, 50))} ms, p99 ${fmt(percentile(latencies, 99))} ms`,
    );
    console.log(
      `  then paid at the sandbox: ${fmt(payments.paid)} charges (${fmt(PAID_SHARE * 100)} %), their paid callbacks in ${fmt(payments.seconds, 1)} s: ${fmt((TOTAL + payments.paid) / TOTAL, 2)} callbacks a charge in the figures below`,
    );
    console.log(`  CPU seconds used meanwhile (2 cores = ${fmt(2 * busy, 1)} available): ${cpu.join(', ')}`);
    console.log(requestTimeLine(workBefore, workAfter, 'POST', '/api/v1/accounts-receivable'));
    console.log(
      `  work per charge, POST to the last callback (2 cores = ${fmt((2 * busy * 1000) / TOTAL, 2)} CPU ms available):`,
    );
    for (const line of workPerChargeLines(workBefore, workAfter, TOTAL)) console.log(line);
    console.log('  Postgres backends of the bench database busy meanwhile, on average, by service and wait:');
    for (const line of waitLines) console.log(line);
    console.log(
      `  Postgres per charge (every schema, registration and callback included): ${fmt(writes.rows, 1)} rows written (${fmt(writes.inserted, 1)} inserted, ${fmt(writes.updated, 1)} updated, ${fmt(writes.deleted, 1)} deleted), ${fmt(writes.commits, 2)} commits, ${fmt(writes.walBytes)} bytes of WAL (the whole server's: other work on it counts too)`,
    );
    console.log(`  JetStream messages stored per charge: ${bus}`);
    console.log('  JetStream bytes stored per message (stream info, sampled while messages waited):');
    for (const line of bytesLines) console.log(line);
    console.log(`  Postgres bytes kept per charge (tables, indexes and TOAST, by schema): ${stored}`);
  } finally {
    await system.stop();
  }
}

interface PostgresWrites {
  inserted: number;
  updated: number;
  deleted: number;
  commits: number;
  walBytes: number;
}

/** The bench database's row writes and commits so far, and the server's WAL position. */
async function postgresWrites(url: string): Promise<PostgresWrites> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Backends report their counters at most once a second: let the last ones land.
    await new Promise((r) => setTimeout(r, 1_500));
    const { rows } = await client.query<Record<keyof PostgresWrites, string>>(
      `select tup_inserted as inserted, tup_updated as updated, tup_deleted as deleted, xact_commit as commits,
        pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') as "walBytes"
       from pg_stat_database where datname = current_database()`,
    );
    return Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)])) as unknown as PostgresWrites;
  } finally {
    await client.end();
  }
}

function perCharge(before: PostgresWrites, after: PostgresWrites, charges: number) {
  const d = (k: keyof PostgresWrites) => (after[k] - before[k]) / charges;
  return {
    inserted: d('inserted'),
    updated: d('updated'),
    deleted: d('deleted'),
    rows: d('inserted') + d('updated') + d('deleted'),
    commits: d('commits'),
    walBytes: d('walBytes'),
  };
}

/** What each schema of the bench database takes on disk (tables with their indexes and TOAST), per charge. */
async function storedBytesPerCharge(url: string, charges: number): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ schema: string; bytes: string }>(
      `select n.nspname as schema, sum(pg_total_relation_size(c.oid)) as bytes
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where c.relkind = 'r' and n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast')
       group by 1 order by 2 desc`,
    );
    return rows.map((r) => `${r.schema} ${fmt(Number(r.bytes) / charges)}`).join(', ');
  } finally {
    await client.end();
  }
}

/** Messages each of the bench's streams stored over the run (its last sequence), per charge. */
async function streamMessagesPerCharge(prefix: string, charges: number): Promise<string> {
  const { connect } = await import('nats');
  const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
  try {
    const jsm = await nc.jetstreamManager();
    const parts: string[] = [];
    for await (const s of jsm.streams.list())
      if (s.config.name.includes(prefix) && s.state.last_seq > 0)
        parts.push(`${s.config.name.replace(`${prefix}_`, '')} ${fmt(s.state.last_seq / charges, 2)}`);
    return parts.sort().join(', ');
  } finally {
    await nc.drain();
  }
}

runBench(main);
