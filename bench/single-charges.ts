/**
 * bench/single-charges: one charge per POST, as most ERPs send them when an invoice is issued.
 * BENCH_SINGLE_CLIENTS (16) clients of one tenant post BENCH_SINGLE_CHARGES (3,000) charges, one a
 * POST, each with its own Idempotency-Key, until every charge's registered callback has arrived.
 * Beside it, in the same run: a bare one-row transaction at the same concurrency, on as many
 * connections (intake's INSERT of one charge into a copy of receivables.receivables, one outbox row
 * into a copy of its outbox, one commit). Goals: accept >= 40 % of the bare rate, end to end
 * >= 25 %. It also prints, per charge, what each process did (commits, statements, bus requests and
 * publishes, outgoing HTTP requests, CPU ms), where a POST's time goes inside (gateway, bus, receivables-svc,
 * event loops), what Postgres's busy backends waited on, and a lone POST's latency for comparison.
 * Every app runs as its own process, as `npm start` runs them.
 */
import pg from 'pg';
import { chargeItem } from '@payments/test-support/charge-load';
import {
  developmentUnlessSet,
  eventLoopDelayLine,
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
  workPerChargeLines,
  type BenchSystem,
} from './support';

const TOTAL = Number(process.env.BENCH_SINGLE_CHARGES ?? 3_000);
const CLIENTS = Number(process.env.BENCH_SINGLE_CLIENTS ?? 16);
/** Charges posted one at a time first, for the latency of a lone POST. */
const LONE = 50;

/**
 * Baseline: TOTAL transactions of one charge row (intake's statement) and one outbox row, one commit
 * each, CLIENTS at a time on CLIENTS connections, into copies of receivables-svc's tables (keys,
 * indexes, defaults): no HTTP, bus, validation, idempotency record or client lookup.
 */
async function bareTransactionRate(system: BenchSystem): Promise<number> {
  const intake = intakeStatement();
  const connect = async () => {
    const client = new pg.Client({ connectionString: system.databaseUrl, options: '-c search_path=bench_bare' });
    await client.connect();
    return client;
  };
  const setup = await connect();
  await setup.query('create schema bench_bare');
  await setup.query('create table bench_bare.receivables (like receivables.receivables including all)');
  await setup.query('create table bench_bare.outbox (like receivables.outbox including all)');
  const rows = Array.from({ length: TOTAL }, (_, i) =>
    intake.row(system.tenantId, chargeItem(system.clientId, system.receiver.url, i), system.payer),
  );
  const clients = await Promise.all(Array.from({ length: CLIENTS }, connect));
  let next = 0;
  const started = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      while (next < TOTAL) {
        const row = rows[next++];
        await client.query('begin');
        const inserted = await client.query(intake.sql, intake.arrays([row]));
        if (inserted.rowCount !== 1) throw new Error(`inserted ${inserted.rowCount} rows, not 1`);
        await client.query('insert into outbox (stream, msg_id, payload) values ($1, $2, $3)', [
          'receivable-registrations',
          `bare:${String(row[0])}`,
          JSON.stringify({ tenant_id: system.tenantId, receivable_ids: [row[0]], queued_at: new Date().toISOString() }),
        ]);
        await client.query('commit');
      }
    }),
  );
  const rate = TOTAL / ((performance.now() - started) / 1000);
  await Promise.all(clients.map((c) => c.end()));
  await setup.query('drop schema bench_bare cascade');
  await setup.end();
  return rate;
}

interface Posted {
  /** When each charge's POST was sent (ms), by account_receivable_id. */
  sentAt: Map<string, number>;
  /** Each POST's time to its 202, ms. */
  latencies: number[];
}

/** `clients` loops posting one charge each until `total` are accepted. */
async function postSingles(system: BenchSystem, total: number, clients: number): Promise<Posted> {
  const items = Array.from({ length: total }, (_, i) => chargeItem(system.clientId, system.receiver.url, i));
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        const item = items[next++];
        const at = Date.now();
        const started = performance.now();
        const res = await fetch(`${system.api}/accounts-receivable`, {
          method: 'POST',
          headers: { ...system.headers, 'idempotency-key': crypto.randomUUID() },
          body: JSON.stringify([item]),
        });
        const text = await res.text();
        if (res.status !== 202) throw new Error(`POST answered ${res.status}: ${text}`);
        latencies.push(performance.now() - started);
        sentAt.set(item.account_receivable_id, at);
      }
    }),
  );
  return { sentAt, latencies: latencies.sort((a, b) => a - b) };
}

async function main(): Promise<void> {
  developmentUnlessSet();
  const system = await startBenchSystem();
  try {
    const bare = await bareTransactionRate(system);

    // A lone POST's latency, with nothing else in flight (and its callbacks out of the way).
    const lone = await postSingles(system, LONE, 1);
    await system.receiver.waitForEvents(LONE, 120_000);
    system.receiver.reset();

    const before = await readWork(system);
    const waits = sampleWaits(system.databaseUrl);
    const streamBytes = sampleStreamBytes(system.prefix);
    const started = Date.now();
    const posted = await postSingles(system, TOTAL, CLIENTS);
    const acceptedIn = (Date.now() - started) / 1000;
    const accepting = await readWork(system, 0);
    await system.receiver.waitForEvents(TOTAL, 900_000);
    const endToEnd = (Math.max(...system.receiver.bodies.values()) - started) / 1000;
    const waitLines = await waits.stop();
    const after = await readWork(system);
    // Then a payment for most charges (BENCH_PAID_SHARE), for the work of 1.8 callbacks a charge.
    // The share is of every charge stored, the lone ones included: PAID_SHARE of the TOTAL paid.
    const payments = await payShare(system, (PAID_SHARE * TOTAL) / (TOTAL + LONE), TOTAL);
    const afterPaid = await readWork(system);
    const bytesLines = await streamBytes.stop();

    const toCallback = [...system.receiver.bodies.entries()]
      .map(([id, at]) => at - (posted.sentAt.get(id) ?? at))
      .sort((a, b) => a - b);
    const accepted = TOTAL / acceptedIn;
    const delivered = TOTAL / endToEnd;
    console.log(`\nbench/single-charges: ${fmt(TOTAL)} charges, one per POST, ${CLIENTS} clients of one tenant`);
    console.log(
      `  bare one-row transaction (intake's INSERT of one charge + one outbox row, one commit), ${CLIENTS} connections: ${fmt(bare)} transactions/s`,
    );
    console.log(
      `  accepted: ${fmt(accepted)} charges/s in ${fmt(acceptedIn, 1)} s   ratio to bare: ${fmt((accepted / bare) * 100, 1)} %   (goal >= 40 %)`,
    );
    console.log(
      `  end to end, POST to registered callback: ${fmt(delivered)} charges/s in ${fmt(endToEnd, 1)} s   ratio to bare: ${fmt((delivered / bare) * 100, 1)} %   (goal >= 25 %)`,
    );
    console.log(
      `  POST latency: p50 ${fmt(percentile(posted.latencies, 50), 1)} ms, p99 ${fmt(percentile(posted.latencies, 99), 1)} ms   (a lone POST, ${LONE} one after another first: p50 ${fmt(percentile(lone.latencies, 50), 1)} ms)`,
    );
    console.log(requestTimeLine(before, accepting, 'POST', '/api/v1/accounts-receivable'));
    console.log(eventLoopDelayLine(accepting));
    console.log(
      `  POST to callback: p50 ${fmt(percentile(toCallback, 50))} ms, p99 ${fmt(percentile(toCallback, 99))} ms`,
    );
    console.log(
      `  work per charge, POST to callback (2 cores = ${fmt((2 * endToEnd * 1000) / TOTAL, 2)} CPU ms available):`,
    );
    for (const line of workPerChargeLines(before, after, TOTAL)) console.log(line);
    console.log(`  of which until the last 202 (${fmt(acceptedIn, 1)} s):`);
    for (const line of workPerChargeLines(before, accepting, TOTAL, { postgresCount: false })) console.log(line);
    console.log(`  and after it, until the last callback (${fmt(endToEnd - acceptedIn, 1)} s):`);
    for (const line of workPerChargeLines(accepting, after, TOTAL, { postgresCount: false })) console.log(line);
    if (payments.paid > 0) {
      console.log(
        `  then paid at the sandbox: ${fmt(payments.paid)} charges (${fmt(PAID_SHARE * 100)} %), their paid callbacks in ${fmt(payments.seconds, 1)} s; work per charge, POST to the last paid callback (${fmt((TOTAL + payments.paid) / TOTAL, 2)} callbacks a charge):`,
      );
      for (const line of workPerChargeLines(before, afterPaid, TOTAL)) console.log(line);
    }
    console.log('  JetStream bytes stored per message (stream info, sampled while messages waited):');
    for (const line of bytesLines) console.log(line);
    console.log('  Postgres backends of the bench database busy meanwhile, on average, by service and wait:');
    for (const line of waitLines) console.log(line);
  } finally {
    await system.stop();
  }
}

runBench(main);
