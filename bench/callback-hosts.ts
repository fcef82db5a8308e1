/**
 * bench/callback-hosts: callback-svc's memory with many distinct failing receivers (docs/architecture.md:
 * per-host memory is bounded). Rounds of 10,000 callbacks, each to its own host (127.x.y.z on a port
 * where nothing listens: every attempt fails at once with ECONNREFUSED), three rounds of new hosts, so
 * 30,000 distinct failing hosts. callback-svc's RSS is printed after each round beside a baseline
 * measured in the same run on the same process: idle, then after 10,000 callbacks delivered to one
 * healthy host (the same work, one host). Retries are scheduled 10 min out, so each event costs one
 * attempt and then waits in Postgres, not in memory.
 */
import { provisionFromEnv as provisionBusFor } from '@payments/gateway/src/transport/bus/bus-provision';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { connectBus, type Bus } from '@payments/bus';
import { messageIds, Streams, type CallbackRequest, type CallbackRequestBatch } from '@payments/contracts';
import { createTestDatabase } from '@payments/db';
import { createTenant, loadGatewayConfig, openAdminDatabase, startGateway } from '@payments/gateway';
import { createLogger } from '@payments/logger';
import {
  appDatabaseUrl,
  CountingReceiver,
  deleteStreams,
  developmentUnlessSet,
  fmt,
  migrate,
  freePort,
  randomPrefix,
  runBench,
  startApp,
} from './support';

const HOSTS_PER_ROUND = Number(process.env.BENCH_HOSTS ?? 10_000);
const ROUNDS = 3;
const BATCH = 100;

/** Resident set of a process, MB (VmRSS in /proc, Linux). */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? NaN) / 1024;
}

/** The i-th distinct loopback host of a round (127.r.x.y), on a port where nothing listens. */
function failingUrl(round: number, i: number, port: number): string {
  return `http://127.${round + 1}.${Math.floor(i / 250)}.${(i % 250) + 1}:${port}/hook`;
}

async function publishAll(bus: Bus, tenantId: string, urls: string[]): Promise<void> {
  for (let i = 0; i < urls.length; i += BATCH) {
    const requests: CallbackRequest[] = urls.slice(i, i + BATCH).map((url) => ({
      event_id: `evt_${randomUUID().replace(/-/g, '')}`,
      tenant_id: tenantId,
      event_type: 'receivable.registered',
      url,
      payload: { success: true, type: 'registered', accounts_receivable_id: randomUUID() },
    }));
    const batch: CallbackRequestBatch = { requests };
    await bus.streams.publish(Streams.callbackRequests, batch, messageIds.callbackBatch(batch));
  }
}

/** Waits until callback-svc has recorded `n` attempts in all, then lets the process settle. */
async function attemptsRecorded(db: pg.Client, n: number, timeoutMs = 300_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ n: string }>('select count(*) as n from callbacks.attempts');
    if (Number(rows[0].n) >= n) break;
    if (Date.now() > end) throw new Error(`only ${rows[0].n} of ${n} attempts recorded`);
    await new Promise((r) => setTimeout(r, 250));
  }
  await new Promise((r) => setTimeout(r, 3_000));
}

/** From callback-svc's /metrics: failing hosts remembered, and the V8 heap in use (MB). */
async function scrape(opsPort: number): Promise<{ failing: number; heapMb: number }> {
  const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
  const value = (name: string) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(text)?.[1] ?? NaN);
  return { failing: value('callback_failing_hosts'), heapMb: value('nodejs_heap_size_used_bytes') / 2 ** 20 };
}

async function main(): Promise<void> {
  developmentUnlessSet();
  const logger = createLogger('bench', 'warn');
  const database = await createTestDatabase();
  const prefix = randomPrefix();
  const opsPort = await freePort();
  const closedPort = await freePort();
  const env = { DATABASE_URL: database.url, BUS_PREFIX: prefix, PORT: '0', LOG_LEVEL: 'warn' };
  // The services only check their schema and the bus at start: migrated and provisioned first, as
  // npm start does; each app then logs in as its own role.
  await migrate(database.url);
  await provisionBusFor({ ...process.env, ...env });
  const gateway = await startGateway(
    loadGatewayConfig({ ...env, DATABASE_URL: appDatabaseUrl('gateway', database.url) }),
    logger,
  );
  const admin = await openAdminDatabase(database.url);
  const tenant = await createTenant(admin, 'bench');
  let child: ChildProcess | undefined;
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  const bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'bench', logger });
  const receiver = await new CountingReceiver().start();
  try {
    child = await startApp(
      'callback-svc',
      {
        ...env,
        DATABASE_URL: appDatabaseUrl('callback-svc', database.url),
        CALLBACK_PORT: String(opsPort),
        CALLBACK_RETRY_SCHEDULE_MS: '600000',
        CALLBACK_RETRY_JITTER_PERCENT: '0',
        // Loopback failures are instant; the attempt deadline is not what is measured here.
        CALLBACK_TIMEOUT_MS: '2000',
      },
      'callback-svc ready',
    );
    const pid = child.pid!;
    await new Promise((r) => setTimeout(r, 3_000));
    const idle = { rss: rssMb(pid), ...(await scrape(opsPort)) };

    // Baseline: the same number of callbacks to one healthy host.
    await publishAll(
      bus,
      tenant.tenant_id,
      Array.from({ length: HOSTS_PER_ROUND }, () => receiver.url),
    );
    await receiver.waitForEvents(HOSTS_PER_ROUND, 300_000);
    await attemptsRecorded(db, HOSTS_PER_ROUND);
    const oneHost = { rss: rssMb(pid), ...(await scrape(opsPort)) };

    const rounds: Array<{ hosts: number; rss: number; heapMb: number; failing: number; seconds: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const started = performance.now();
      const urls = Array.from({ length: HOSTS_PER_ROUND }, (_, i) => failingUrl(round, i, closedPort));
      await publishAll(bus, tenant.tenant_id, urls);
      await attemptsRecorded(db, HOSTS_PER_ROUND * (round + 2));
      rounds.push({
        hosts: HOSTS_PER_ROUND * (round + 1),
        rss: rssMb(pid),
        ...(await scrape(opsPort)),
        seconds: (performance.now() - started) / 1000,
      });
    }

    console.log('\nbench/callback-hosts: callback-svc memory with distinct failing receivers (ECONNREFUSED)');
    console.log(
      `  baseline, idle after start:                          RSS ${fmt(idle.rss, 1)} MB, heap used ${fmt(idle.heapMb, 1)} MB`,
    );
    console.log(
      `  baseline, ${fmt(HOSTS_PER_ROUND)} callbacks delivered to one healthy host: RSS ${fmt(oneHost.rss, 1)} MB, heap used ${fmt(oneHost.heapMb, 1)} MB`,
    );
    for (const r of rounds)
      console.log(
        `  ${fmt(r.hosts).padStart(6)} distinct failing hosts so far (round ${fmt(r.seconds, 1)} s): RSS ${fmt(r.rss, 1)} MB, heap used ${fmt(r.heapMb, 1)} MB, callback_failing_hosts ${fmt(r.failing)}`,
      );
    const last = rounds[rounds.length - 1];
    const growth = last.rss - rounds[0].rss;
    console.log(
      `  RSS growth from ${fmt(rounds[0].hosts)} to ${fmt(last.hosts)} hosts: ${fmt(growth, 1)} MB (${fmt((growth * 2 ** 20) / (last.hosts - rounds[0].hosts))} bytes per extra host); failing hosts are capped at 10,000`,
    );
  } finally {
    child?.kill('SIGTERM');
    if (child) await new Promise((r) => child!.once('exit', r));
    await receiver.stop();
    await db.end();
    await bus.close();
    await gateway.stop();
    await admin.destroy();
    await deleteStreams(prefix);
    await database.drop();
  }
}

runBench(main);
