/**
 * bench/receivables: 20,000 charges in batches of 1,000 through the gateway, until every registered
 * callback has arrived; beside a bare INSERT of 20,000 rows like them into Postgres in the same run,
 * as intake inserts (its statement, 1,000 rows a statement) into a copy of its table (same keys and
 * indexes). Targets (issue 4, 2-core machine): accept at >= 40 % of the bare insert rate; end to end
 * >= 1,000 charges/s. Every app runs as its own process, as `npm start` runs them.
 */
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { createTestDatabase } from '@payments/db';
import { createTenant, openAdminDatabase } from '@payments/gateway';
import { INTAKE_COLUMNS } from '@payments/receivables-svc';
import { chargeItem } from '@payments/test-support/charge-load';
import {
  CountingReceiver,
  cpuSeconds,
  cpuSecondsOf,
  deleteStreams,
  developmentUnlessSet,
  fmt,
  percentile,
  randomPrefix,
  runBench,
  startApp,
  stopApps,
  systemEnv,
} from './support';

const TOTAL = Number(process.env.BENCH_CHARGES ?? 20_000);
const BATCH = 1_000;
const CONCURRENT_POSTS = Number(process.env.BENCH_CONCURRENT_POSTS ?? 2);

const itemFor = chargeItem;

/** Intake's statement: one INSERT ... SELECT FROM unnest(one array per column), existing ids skipped. */
const INTAKE_INSERT = `insert into receivables (${INTAKE_COLUMNS.map(([c]) => `"${c}"`).join(', ')})
  select * from unnest(${INTAKE_COLUMNS.map(([, type], k) => `$${k + 1}::${type}[]`).join(', ')})
  on conflict (tenant_id, account_receivable_id) do nothing
  returning id`;

/** A charge as intake stores it (toRow): values in INTAKE_COLUMNS order. */
function rowFor(tenantId: string, item: ReturnType<typeof itemFor>, payer: Record<string, string | null>): unknown[] {
  return [
    randomUUID(),
    tenantId,
    item.account_receivable_id,
    item.client_id,
    item.payment_slip_id,
    item.payment_method,
    item.url_callback,
    item.emission_date,
    item.due_date,
    Math.round(item.value * 100),
    item.discount_type,
    null,
    null,
    Math.round(item.fine_value * 100),
    Math.round(item.interest_amount * 100),
    JSON.stringify(
      item.items.map((l) => ({
        description: l.description,
        quantity: l.quantity,
        price_cents: Math.round(l.price * 100),
      })),
    ),
    JSON.stringify(payer),
    payer.name,
    'pending',
    'queued',
    null,
    item.account_receivable_id,
    item.client_id,
    item.payment_slip_id,
  ];
}

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
  payer: Record<string, string | null>,
  url: string,
): Promise<{ rate: number; indexes: string[] }> {
  const client = new pg.Client({ connectionString: databaseUrl, options: '-c search_path=bench_bare' });
  await client.connect();
  await client.query('create schema bench_bare');
  await client.query('create table bench_bare.receivables (like receivables.receivables including all)');
  const indexes = await indexShapes(client, 'receivables.receivables');
  const copied = await indexShapes(client, 'bench_bare.receivables');
  if (JSON.stringify(copied) !== JSON.stringify(indexes))
    throw new Error(`the baseline table's indexes differ from the service's: ${copied.join('; ')}`);
  const batches = Array.from({ length: TOTAL / BATCH }, () =>
    Array.from({ length: BATCH }, (_, i) => rowFor(tenantId, itemFor(payer.clientId!, url, i), payer)),
  );
  const started = performance.now();
  for (const rows of batches) {
    const result = await client.query(
      INTAKE_INSERT,
      INTAKE_COLUMNS.map((_, k) => rows.map((row) => row[k])),
    );
    if (result.rowCount !== BATCH) throw new Error(`inserted ${result.rowCount} of ${BATCH}`);
  }
  const rate = TOTAL / ((performance.now() - started) / 1000);
  await client.query('drop schema bench_bare cascade');
  await client.end();
  return { rate, indexes };
}

async function main(): Promise<void> {
  developmentUnlessSet();
  const database = await createTestDatabase();
  const prefix = randomPrefix();
  const { env, gatewayPort } = await systemEnv(database.url, prefix);

  const children: ChildProcess[] = [];
  const receiver = await new CountingReceiver().start();
  try {
    children.push(await startApp('bank-sandbox', env, 'bank-sandbox ready'));
    children.push(await startApp('clients-svc', env, 'clients-svc ready'));
    children.push(await startApp('callback-svc', env, 'callback-svc ready'));
    children.push(await startApp('receivables-svc', env, 'receivables-svc ready'));
    children.push(await startApp('gateway', env, 'gateway listening'));
    const api = `http://127.0.0.1:${gatewayPort}/api/v1`;
    const admin = await openAdminDatabase(database.url);
    const tenant = await createTenant(admin, 'bench');
    await admin.destroy();
    const jwt = (
      (await (
        await fetch(`${api}/authenticate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tenant.integration_token}` },
        })
      ).json()) as { access_token: string }
    ).access_token;
    const headers = { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' };
    const clientId = randomUUID();
    await fetch(`${api}/clients`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': randomUUID() },
      body: JSON.stringify([{ client_id: clientId, name: 'Maria da Silva', cnpj_cpf: '529.982.247-25' }]),
    });
    // The payer intake stores with each charge (what clients-svc answers for this client).
    const payer = {
      clientId,
      name: 'Maria da Silva',
      taxId: '529.982.247-25',
      address: null,
      number: null,
      neighborhood: null,
      city: null,
      state: null,
      zipCode: null,
      email: null,
    };

    const bare = await bareInsertRate(database.url, tenant.tenant_id, payer, receiver.url);

    const apps = ['bank-sandbox', 'clients-svc', 'callback-svc', 'receivables-svc', 'gateway'];
    const writesBefore = await postgresWrites(database.url);
    const cpuBefore = children.map((c) => cpuSeconds(c.pid!));
    const pgBefore = cpuSecondsOf(/^postgres/);
    const natsBefore = cpuSecondsOf(/nats-server/);
    const selfBefore = process.cpuUsage();
    const batches = Array.from({ length: TOTAL / BATCH }, () =>
      Array.from({ length: BATCH }, (_, i) => itemFor(clientId, receiver.url, i)),
    );
    const postedAt = new Map<string, number>();
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
    const selfCpu = process.cpuUsage(selfBefore);
    const writes = perCharge(writesBefore, await postgresWrites(database.url), TOTAL);
    const bus = await streamMessagesPerCharge(prefix, TOTAL);
    const stored = await storedBytesPerCharge(database.url, TOTAL);
    const cpu = [
      ...apps.map((app, i) => `${app} ${fmt(cpuSeconds(children[i].pid!) - cpuBefore[i], 1)}`),
      `postgres ${fmt(cpuSecondsOf(/^postgres/) - pgBefore, 1)}`,
      `nats ${fmt(cpuSecondsOf(/nats-server/) - natsBefore, 1)}`,
      `bench (client + receiver) ${fmt((selfCpu.user + selfCpu.system) / 1e6, 1)}`,
    ];

    // Callback arrival per charge, by the id in its body: re-read from the receiver's arrivals by webhook-id is not enough, so ask the bodies.
    const latencies = [...receiver.bodies.entries()]
      .map(([arId, at]) => at - postedAt.get(arId)!)
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
      `  (registration gives way to intake: INTAKE_PRIORITY_MAX_DEFER_MS=${process.env.INTAKE_PRIORITY_MAX_DEFER_MS ?? 'default 2000'}, INTAKE_PRIORITY_QUIET_MS=${process.env.INTAKE_PRIORITY_QUIET_MS ?? 'default 250'})`,
    );
    console.log(
      `  end to end, POST to registered callback: ${fmt(TOTAL / endToEnd)} charges/s over ${fmt(endToEnd, 1)} s   (target >= 1,000 charges/s)`,
    );
    console.log(
      `  time from POST to callback: p50 ${fmt(percentile(latencies, 50))} ms, p99 ${fmt(percentile(latencies, 99))} ms`,
    );
    console.log(`  CPU seconds used meanwhile (2 cores = ${fmt(2 * endToEnd, 1)} available): ${cpu.join(', ')}`);
    console.log(
      `  Postgres per charge (every schema, registration and callback included): ${fmt(writes.rows, 1)} rows written (${fmt(writes.inserted, 1)} inserted, ${fmt(writes.updated, 1)} updated, ${fmt(writes.deleted, 1)} deleted), ${fmt(writes.commits, 2)} commits, ${fmt(writes.walBytes)} bytes of WAL (the whole server's: other work on it counts too)`,
    );
    console.log(`  JetStream messages stored per charge: ${bus}`);
    console.log(`  Postgres bytes kept per charge (tables, indexes and TOAST, by schema): ${stored}`);
  } finally {
    await stopApps(children);
    await receiver.stop();
    await deleteStreams(prefix);
    await database.drop();
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
