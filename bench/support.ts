import { randomBytes, randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { createTestDatabase, serviceDatabaseUrl } from '@payments/db';
import { createTenant, openAdminDatabase } from '@payments/gateway';
import { MetricNames } from '@payments/metrics';
import { INTAKE_COLUMNS } from '@payments/receivables-svc';
import type { chargeItem } from '@payments/test-support/charge-load';
import { freePort } from '@payments/test-support/free-port';
import { APP_SCHEMAS, migrateDatabase } from '@payments/test-support/instances';
import { provisionFromEnv as provisionBusFor } from '@payments/gateway/src/transport/bus/bus-provision';

/** Shared helpers for the benchmarks: percentiles, a counting receiver, formatting. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export function randomPrefix(): string {
  return `bench${randomBytes(4).toString('hex')}`;
}

/**
 * An HTTP server that answers 200 at once and tells when each event arrived. Progress is counted in
 * distinct events (webhook-id), not requests: a redelivered event counts once, whoever sends it.
 */
export class CountingReceiver {
  private server!: Server;
  url = '';
  /** Requests received, duplicates included. */
  requests = 0;
  /** First arrival per webhook-id. */
  readonly arrivals = new Map<string, number>();
  /** First arrival per accounts_receivable_id found in the body (receivables callbacks). */
  readonly bodies = new Map<string, number>();
  private waiters: Array<{ n: number; resolve: () => void }> = [];

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const now = Date.now();
        const id = req.headers['webhook-id'];
        if (typeof id === 'string' && !this.arrivals.has(id)) this.arrivals.set(id, now);
        const arId = /"accounts_receivable_id":"([0-9a-f-]{36})"/.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
        if (arId && !this.bodies.has(arId)) this.bodies.set(arId, now);
        this.requests += 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        this.waiters = this.waiters.filter((w) => (this.events >= w.n ? (w.resolve(), false) : true));
      });
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  /** Distinct events received (by webhook-id). */
  get events(): number {
    return this.arrivals.size;
  }

  reset(): void {
    this.requests = 0;
    this.arrivals.clear();
    this.bodies.clear();
  }

  /** Resolves once `n` distinct events (webhook-ids) have arrived since the last reset. */
  waitForEvents(n: number, timeoutMs = 120_000): Promise<void> {
    if (this.events >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${this.events} of ${n} events arrived (${this.requests} requests)`)),
        timeoutMs,
      );
      this.waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100/s)
  } catch {
    return 0;
  }
}

/** CPU seconds of every process whose command line matches, e.g. all Postgres backends. */
export function cpuSecondsOf(pattern: RegExp): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (pattern.test(readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ')))
        total += cpuSeconds(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

/**
 * Apps run in production unless NODE_ENV says otherwise; a bench, like npm start, runs them in
 * development when NODE_ENV is unset (the apps it starts, in-process or as children, inherit it).
 */
export function developmentUnlessSet(): void {
  if (!process.env.NODE_ENV) process.env.NODE_ENV = 'development';
}

export { freePort };

/**
 * Starts apps/<app>/src/main.ts in its own Node process, as `npm start` does, and resolves once its
 * output says `ready`, the bus provisioned first. BENCH_PROFILE=<app> writes a CPU profile of that app to /tmp/prof.
 */
export async function startApp(app: string, env: Record<string, string>, ready: string): Promise<ChildProcess> {
  // The services only check the bus at start: provisioned first (idempotent), as npm start does.
  await provisionBusFor({ ...process.env, ...env });
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_PROFILE === app ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []),
      '--import',
      'tsx',
      join(__dirname, '..', 'apps', app, 'src', 'main.ts'),
    ],
    {
      cwd: join(__dirname, '..'),
      env: { ...process.env, ...env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes(ready)) resolve(child);
      if (out.length > 100_000) out = out.slice(-10_000);
    });
    child.once('exit', (code) => reject(new Error(`${app} exited ${code}; its last output:\n${out.slice(-3_000)}`)));
  });
}

/**
 * The environment of a whole system started by a bench with startApp: its database and bus prefix,
 * free ports, the sandbox bank as provider, and the rate limit off (a bench posts as fast as intake
 * takes charges). Returns the ports it chose too.
 */
export async function systemEnv(
  databaseUrl: string,
  prefix: string,
): Promise<{ env: Record<string, string>; gatewayPort: number }> {
  const gatewayPort = await freePort();
  const receivablesPort = await freePort();
  const sandboxPort = await freePort();
  const env = {
    DATABASE_URL: databaseUrl,
    BUS_PREFIX: prefix,
    PORT: String(gatewayPort),
    RECEIVABLES_PORT: String(receivablesPort),
    BANK_SANDBOX_PORT: String(sandboxPort),
    CLIENTS_PORT: '0',
    CALLBACK_PORT: '0',
    PROVIDER_BASE_URL: `http://127.0.0.1:${sandboxPort}`,
    BANK_SANDBOX_WEBHOOK_URL: `http://127.0.0.1:${receivablesPort}/provider/webhooks/bank-sandbox`,
    RATE_LIMIT_PER_SECOND: '0',
  };
  return { env, gatewayPort };
}

/** The URL an app logs in with: `url`'s user replaced by the app's role, `<schema>_svc`. */
export function appDatabaseUrl(app: SystemApp, url: string): string {
  return serviceDatabaseUrl(url, APP_SCHEMAS[app]);
}

/** `npm run migrate` on a bench's database, as npm start runs it before the apps. */
export function migrate(url: string): Promise<void> {
  return migrateDatabase({ NODE_ENV: 'development', MIGRATION_DATABASE_URL: url, DATABASE_URL: url });
}

/** Stops apps started with startApp, last first, and waits for each to exit. */
export async function stopApps(children: ChildProcess[]): Promise<void> {
  for (const child of [...children].reverse()) {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  }
}

/** Deletes the JetStream streams of a bench's bus prefix (the local NATS keeps them otherwise). */
export async function deleteStreams(prefix: string): Promise<void> {
  const { connect } = await import('nats');
  const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
  const jsm = await nc.jetstreamManager();
  for await (const s of jsm.streams.list()) if (s.config.name.includes(prefix)) await jsm.streams.delete(s.config.name);
  await nc.drain();
}

/**
 * BENCH_PAID_SHARE (0.8): the share of the charges a whole-system bench pays at the bank sandbox once
 * they are registered, so that a charge makes 1.8 callbacks, as the capacity model counts them
 * (registered, then paid for most). 0 pays none.
 */
export const PAID_SHARE = Number(process.env.BENCH_PAID_SHARE ?? 0.8);

/**
 * Pays `share` of the bench database's registered charges through the sandbox's pay control,
 * `concurrency` at a time (hybrid charges by boleto and PIX alternately), then waits until the receiver has
 * `eventsBefore` plus one paid callback per payment. The payments made and the seconds it took.
 */
export async function payShare(
  system: BenchSystem,
  share: number,
  eventsBefore: number,
  concurrency = 16,
): Promise<{ paid: number; seconds: number }> {
  if (share <= 0) return { paid: 0, seconds: 0 };
  const started = Date.now();
  const client = new pg.Client({ connectionString: system.databaseUrl });
  await client.connect();
  const { rows } = await client
    .query<{ our_number: string; payment_method: number }>(
      `select our_number, payment_method from receivables.receivables where our_number is not null order by random()
        limit (select round(count(*) * $1::float8) from receivables.receivables where our_number is not null)`,
      [share],
    )
    .finally(() => client.end());
  const sandbox = (system.metricsUrls.get('bank-sandbox') ?? '').replace(/\/metrics$/, '');
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < rows.length) {
        const i = next++;
        const res = await fetch(`${sandbox}/sandbox/charges/${rows[i].our_number}/pay`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          // A PIX-only charge (payment method 3) has no slip; a hybrid one is paid either way.
          body: JSON.stringify({ method: rows[i].payment_method === 3 || i % 2 === 1 ? 'pix' : 'boleto' }),
        });
        if (res.status !== 200) throw new Error(`the sandbox's pay answered ${res.status}: ${await res.text()}`);
      }
    }),
  );
  await system.receiver.waitForEvents(eventsBefore + rows.length, 900_000);
  return { paid: rows.length, seconds: (Date.now() - started) / 1000 };
}

/**
 * Samples every stream of a bench's prefix (stream info, every `everyMs`) while messages wait in it,
 * for the bytes JetStream stores per message: its bytes over its messages, averaged over the samples
 * that found messages. Work-queue streams drop messages once acknowledged, so only a sample taken
 * while some wait sees them.
 */
export function sampleStreamBytes(prefix: string, everyMs = 100): { stop(): Promise<string[]> } {
  const seen = new Map<string, { bytes: number; messages: number; samples: number }>();
  return runUntilStopped(async (stopped) => {
    const { connect } = await import('nats');
    const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
    try {
      const jsm = await nc.jetstreamManager();
      while (!stopped()) {
        for await (const s of jsm.streams.list()) {
          if (!s.config.name.includes(prefix) || s.state.messages === 0) continue;
          const name = s.config.name.replace(`${prefix}_`, '');
          const sum = seen.get(name) ?? { bytes: 0, messages: 0, samples: 0 };
          seen.set(name, {
            bytes: sum.bytes + s.state.bytes,
            messages: sum.messages + s.state.messages,
            samples: sum.samples + 1,
          });
        }
        await new Promise((r) => setTimeout(r, everyMs));
      }
    } finally {
      await nc.drain();
    }
    return [...seen.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([name, s]) =>
          `    ${name}: ${fmt(s.bytes / s.messages)} bytes a message (${fmt(s.samples)} samples, ${fmt(s.messages / s.samples, 1)} messages waiting on average)`,
      );
  });
}

/**
 * Runs `loop` in the background, beside what a bench measures, until `stop()`; the loop reads
 * `stopped()` between its rounds, and `stop()` waits for it to end and resolves with its result.
 */
export function runUntilStopped<T>(loop: (stopped: () => boolean) => Promise<T>): { stop(): Promise<T> } {
  let stopped = false;
  const done = loop(() => stopped);
  return {
    async stop() {
      stopped = true;
      return done;
    },
  };
}

/** Runs a bench's main and exits with its outcome. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/** The apps a whole-system bench starts, in start order (each in its own process, as `npm start` runs them). */
export const SYSTEM_APPS = ['bank-sandbox', 'clients-svc', 'callback-svc', 'receivables-svc', 'gateway'] as const;
export type SystemApp = (typeof SYSTEM_APPS)[number];

const READY_LINE: Record<SystemApp, string> = {
  'bank-sandbox': 'bank-sandbox ready',
  'clients-svc': 'clients-svc ready',
  'callback-svc': 'callback-svc ready',
  'receivables-svc': 'receivables-svc ready',
  gateway: 'gateway listening',
};

/** A payer as intake stores it with each charge (what clients-svc answers for the bench's client). */
export interface BenchPayer {
  clientId: string;
  name: string;
  taxId: string;
  [field: string]: string | null;
}

/** A whole system started by a bench: its apps, one tenant with one client, and a counting receiver. */
export interface BenchSystem {
  databaseUrl: string;
  prefix: string;
  /** The gateway's API root, e.g. http://127.0.0.1:1234/api/v1. */
  api: string;
  /** Authorization (the tenant's access token) and content type for the API. */
  headers: Record<string, string>;
  tenantId: string;
  clientId: string;
  payer: BenchPayer;
  receiver: CountingReceiver;
  /** Each app's process, by app. */
  processes: Map<SystemApp, ChildProcess>;
  /** Each app's /metrics URL. */
  metricsUrls: Map<SystemApp, string>;
  stop(): Promise<void>;
}

/**
 * A tenant of a bench system, as an ERP starts: created by the admin, its integration token exchanged
 * for an access token, and one client (the payer of every charge) registered.
 */
export async function benchTenant(
  api: string,
  databaseUrl: string,
  name: string,
): Promise<{ tenantId: string; headers: Record<string, string>; clientId: string }> {
  const admin = await openAdminDatabase(databaseUrl);
  const tenant = await createTenant(admin, name);
  await admin.destroy();
  const auth = await fetch(`${api}/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.integration_token}` },
  });
  const { access_token } = (await auth.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' };
  const clientId = randomUUID();
  const created = await fetch(`${api}/clients`, {
    method: 'POST',
    headers: { ...headers, 'idempotency-key': randomUUID() },
    body: JSON.stringify([{ client_id: clientId, name: 'Maria da Silva', cnpj_cpf: '529.982.247-25' }]),
  });
  if (created.status !== 201) throw new Error(`POST /clients answered ${created.status}: ${await created.text()}`);
  return { tenantId: tenant.tenant_id, headers, clientId };
}

/**
 * Starts every app in its own process on a new database and bus prefix (systemEnv, with fixed ports
 * for clients-svc and callback-svc so their /metrics can be read), one tenant, its access token and
 * one client. `env` adds to or overrides the apps' environment.
 */
export async function startBenchSystem(env: Record<string, string> = {}): Promise<BenchSystem> {
  const database = await createTestDatabase();
  const prefix = randomPrefix();
  const system = await systemEnv(database.url, prefix);
  const appEnv: Record<string, string> = {
    ...system.env,
    CLIENTS_PORT: String(await freePort()),
    CALLBACK_PORT: String(await freePort()),
    // The sandbox's Inter dialect (unused here) on a free port: its fixed default collides with
    // another system running on the machine, and the sandbox would not start.
    BANK_SANDBOX_INTER_PORT: String(await freePort()),
    ...env,
  };
  const portOf: Record<SystemApp, string> = {
    'bank-sandbox': appEnv.BANK_SANDBOX_PORT,
    'clients-svc': appEnv.CLIENTS_PORT,
    'callback-svc': appEnv.CALLBACK_PORT,
    'receivables-svc': appEnv.RECEIVABLES_PORT,
    gateway: appEnv.PORT,
  };
  const processes = new Map<SystemApp, ChildProcess>();
  const receiver = await new CountingReceiver().start();
  const stop = async () => {
    await stopApps([...processes.values()]);
    await receiver.stop();
    await deleteStreams(prefix);
    await database.drop();
  };
  try {
    // Migrated first (`npm run migrate`), as npm start does; each app then logs in as its own role.
    await migrate(database.url);
    for (const app of SYSTEM_APPS)
      processes.set(
        app,
        await startApp(app, { ...appEnv, DATABASE_URL: appDatabaseUrl(app, database.url) }, READY_LINE[app]),
      );
    const api = `http://127.0.0.1:${appEnv.PORT}/api/v1`;
    const { tenantId, headers, clientId } = await benchTenant(api, appDatabaseUrl('gateway', database.url), 'bench');
    const payer: BenchPayer = {
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
    const metricsUrls = new Map(SYSTEM_APPS.map((app) => [app, `http://127.0.0.1:${portOf[app]}/metrics`] as const));
    return {
      databaseUrl: database.url,
      prefix,
      api,
      headers,
      tenantId,
      clientId,
      payer,
      receiver,
      processes,
      metricsUrls,
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

/** The round trips and commits a process counts on its /metrics (libs/metrics' work counters). */
const WORK_METRICS = {
  commits: MetricNames.dbCommits,
  statements: MetricNames.dbStatements,
  busRequests: MetricNames.busRequests,
  busPublishes: MetricNames.busPublishes,
  httpRequests: MetricNames.httpClientRequests,
} as const;
type WorkField = keyof typeof WORK_METRICS;
type WorkCounts = Record<WorkField, number>;

/** One reading of every app's work counters and every process's CPU, to subtract from a later one. */
export interface WorkReading {
  apps: Map<SystemApp, WorkCounts & { cpuSeconds: number }>;
  /** Each app's /metrics text, for figures beyond the work counters. */
  metrics: Map<SystemApp, string>;
  postgresCpuSeconds: number;
  natsCpuSeconds: number;
  /** The bench's own CPU (its clients and receiver). */
  benchCpuSeconds: number;
  /** CPU seconds the whole machine has been busy (every process, other helpers' included). */
  machineBusySeconds: number;
  /** The bench database's commits as Postgres counts them (pg_stat_database.xact_commit). */
  postgresCommits: number;
}

/**
 * Reads every app's /metrics work counters and CPU, Postgres's and NATS's CPU, and Postgres's commit
 * count, after `settleMs`: the apps' last work lands meanwhile, and so do Postgres's counters (its
 * backends report them at most once a second). With 0, Postgres's count lags up to a second.
 */
export async function readWork(system: BenchSystem, settleMs = 1_100): Promise<WorkReading> {
  if (settleMs > 0) await new Promise((r) => setTimeout(r, settleMs));
  const postgresCommits = await databaseCommits(system.databaseUrl);
  const apps = new Map<SystemApp, WorkCounts & { cpuSeconds: number }>();
  const metrics = new Map<SystemApp, string>();
  for (const app of SYSTEM_APPS) {
    const text = await (await fetch(system.metricsUrls.get(app) ?? '')).text();
    metrics.set(app, text);
    const counts = Object.fromEntries(
      Object.entries(WORK_METRICS).map(([field, name]) => [field, metricValue(text, name)]),
    ) as WorkCounts;
    apps.set(app, { ...counts, cpuSeconds: cpuSeconds(system.processes.get(app)?.pid ?? 0) });
  }
  return {
    apps,
    postgresCpuSeconds: cpuSecondsOf(/^postgres/),
    natsCpuSeconds: cpuSecondsOf(/nats-server/),
    benchCpuSeconds: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    machineBusySeconds: machineBusySeconds(),
    metrics,
    postgresCommits,
  };
}

/** A counter's value in Prometheus text (0 when absent). */
function metricValue(text: string, name: string): number {
  return metricSum(text, name, []);
}

/** The sum of a metric's series in Prometheus text whose line contains every one of `parts` (labels). */
export function metricSum(text: string, name: string, parts: string[]): number {
  let sum = 0;
  for (const line of text.split('\n'))
    if ((line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && parts.every((p) => line.includes(p)))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

/** CPU seconds the machine has spent busy (not idle, not waiting for I/O) since boot, from /proc/stat. */
function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = ticks;
  return (user + nice + system + irq + softirq + steal) / 100;
}

async function databaseCommits(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ commits: string }>(
      'select xact_commit as commits from pg_stat_database where datname = current_database()',
    );
    return Number(rows[0]?.commits ?? 0);
  } finally {
    await client.end();
  }
}

/**
 * Per charge, between two readings: each app's commits, statements (Postgres round trips), bus
 * requests, bus publishes, outgoing HTTP requests and CPU ms, their totals, and Postgres's and NATS's CPU ms.
 */
export function workPerChargeLines(
  before: WorkReading,
  after: WorkReading,
  charges: number,
  options: { postgresCount?: boolean } = {},
): string[] {
  const fields: WorkField[] = ['commits', 'statements', 'busRequests', 'busPublishes', 'httpRequests'];
  const heads = ['commits', 'statements', 'bus req', 'bus pub', 'HTTP out', 'CPU ms'];
  const row = (name: string, cells: string[]) =>
    `    ${name.padEnd(16)}${cells.map((c, i) => c.padStart(Math.max(10, heads[i].length + 2))).join('')}`;
  const totals = new Array<number>(fields.length + 1).fill(0);
  const lines = [row('per charge', heads)];
  for (const app of SYSTEM_APPS) {
    const a = after.apps.get(app);
    const b = before.apps.get(app);
    if (!a || !b) continue;
    const values = [...fields.map((f) => (a[f] - b[f]) / charges), ((a.cpuSeconds - b.cpuSeconds) * 1000) / charges];
    values.forEach((v, i) => (totals[i] += v));
    lines.push(
      row(
        app,
        values.map((v, i) => fmt(v, i === fields.length ? 2 : 2)),
      ),
    );
  }
  const cpuMs = (a: number, b: number) => fmt(((a - b) * 1000) / charges, 2);
  const blank = fields.map(() => '');
  lines.push(
    row(
      'apps, total',
      totals.map((v) => fmt(v, 2)),
    ),
  );
  lines.push(row('postgres', [...blank, cpuMs(after.postgresCpuSeconds, before.postgresCpuSeconds)]));
  lines.push(row('nats', [...blank, cpuMs(after.natsCpuSeconds, before.natsCpuSeconds)]));
  lines.push(row('bench itself', [...blank, cpuMs(after.benchCpuSeconds, before.benchCpuSeconds)]));
  const perCharge = (a: number, b: number) => (a - b) / charges;
  const bench = perCharge(after.benchCpuSeconds, before.benchCpuSeconds);
  const system =
    totals[fields.length] / 1000 +
    perCharge(after.postgresCpuSeconds, before.postgresCpuSeconds) +
    perCharge(after.natsCpuSeconds, before.natsCpuSeconds);
  const machine = perCharge(after.machineBusySeconds, before.machineBusySeconds);
  lines.push(row('anything else', [...blank, fmt((machine - system - bench) * 1000, 2)]));
  if (system > 1e-4)
    lines.push(
      `    the system's CPU (apps, Postgres, NATS), ${fmt(system * 1000, 2)} ms per charge, caps 2 cores at ${fmt(2 / system)} charges/s`,
    );
  if (options.postgresCount ?? true)
    lines.push(
      `    Postgres's own count of the database's commits (pg_stat_database, every client): ${fmt((after.postgresCommits - before.postgresCommits) / charges, 2)} per charge`,
    );
  return lines;
}

/**
 * Where a request's time goes, as means over the requests between two readings: the gateway's answer
 * to `route` (its http_request_duration_seconds), the part of it the gateway waited on bus replies,
 * and receivables-svc's time from a request's arrival to its reply (a wait for a handler slot included).
 */
export function requestTimeLine(before: WorkReading, after: WorkReading, method: string, route: string): string {
  const delta = (app: SystemApp, name: string, parts: string[] = []) =>
    metricSum(after.metrics.get(app) ?? '', name, parts) - metricSum(before.metrics.get(app) ?? '', name, parts);
  const labels = [`method="${method}"`, `route="${route}"`];
  const answered = delta('gateway', `${MetricNames.httpRequestDuration}_count`, labels);
  const answerSeconds = delta('gateway', `${MetricNames.httpRequestDuration}_sum`, labels);
  const waited =
    delta('gateway', MetricNames.busRequestSeconds) / Math.max(1, delta('gateway', MetricNames.busRequests));
  const served =
    delta('receivables-svc', MetricNames.busServeSeconds) /
    Math.max(1, delta('receivables-svc', MetricNames.busServed));
  const ms = (seconds: number) => `${fmt(seconds * 1000, 1)} ms`;
  return `  inside, per request (means): the gateway answers ${method} ${route} in ${ms(answerSeconds / Math.max(1, answered))}; its bus requests wait ${ms(waited)} for a reply; receivables-svc takes ${ms(served)} from a request's arrival to its reply`;
}

/**
 * Each app's event-loop delay (mean and p99) since the reading before `reading`: prom-client's
 * default metrics measure it between two scrapes. A loop delayed by others' work is time a request
 * waits in that process without being worked on.
 */
export function eventLoopDelayLine(reading: WorkReading): string {
  const parts = SYSTEM_APPS.map((app) => {
    const text = reading.metrics.get(app) ?? '';
    const ms = (name: string) => fmt(metricSum(text, name, []) * 1000, 1);
    return `${app} ${ms('nodejs_eventloop_lag_mean_seconds')}/${ms('nodejs_eventloop_lag_p99_seconds')}`;
  });
  return `  event-loop delay meanwhile, mean/p99 ms: ${parts.join(', ')}`;
}

/**
 * Samples pg_stat_activity every `everyMs` for the bench database's busy backends (active, or idle
 * in a transaction: a transaction waiting for its client's next statement) and tallies what each was
 * waiting on, by application (the service's name). A transaction idle or waiting for a lock also
 * shows the start of its last statement. Reads from the `postgres` database, so its own queries add
 * no commits to the bench's.
 */
export function sampleWaits(databaseUrl: string, everyMs = 100): { stop(): Promise<string[]> } {
  const tally = new Map<string, number>();
  let samples = 0;
  let stopped = false;
  const admin = new URL(databaseUrl);
  const name = admin.pathname.slice(1);
  admin.pathname = '/postgres';
  const done = (async () => {
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      while (!stopped) {
        const { rows } = await client.query<{ app: string; state: string; wait: string | null; query: string }>(
          `select application_name as app, state, wait_event_type || ':' || wait_event as wait,
                  left(regexp_replace(query, '\\s+', ' ', 'g'), 60) as query
             from pg_stat_activity where datname = $1 and state in ('active', 'idle in transaction')`,
          [name],
        );
        samples += 1;
        for (const r of rows) tally.set(waitKey(r), (tally.get(waitKey(r)) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, everyMs));
      }
    } finally {
      await client.end();
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return [...tally.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([key, n]) => `    ${fmt(n / Math.max(1, samples), 2).padStart(6)} backends  ${key}`);
    },
  };
}

/** What a busy backend is doing, for sampleWaits's tally. */
function waitKey(r: { app: string; state: string; wait: string | null; query: string }): string {
  const app = r.app || '?';
  if (r.state !== 'active') return `${app} idle in transaction, after: ${r.query}`;
  if (r.wait?.startsWith('Lock:')) return `${app} ${r.wait}: ${r.query}`;
  return `${app} ${r.wait ?? 'running (no wait)'}`;
}

/** A charge item as the benches post it (test-support's chargeItem). */
export type BenchChargeItem = ReturnType<typeof chargeItem>;

/**
 * Intake's INSERT (receivables-svc's own statement: INSERT ... SELECT FROM unnest(one array per
 * column), existing ids skipped) and the row intake stores for a charge (its toRow), values in
 * INTAKE_COLUMNS order; `arrays(rows)` turns rows into the statement's parameters. For the bare
 * baselines, which insert as intake does without the service around it.
 */
export function intakeStatement(): {
  sql: string;
  row(tenantId: string, item: BenchChargeItem, payer: BenchPayer): unknown[];
  arrays(rows: unknown[][]): unknown[][];
} {
  const sql = `insert into receivables (${INTAKE_COLUMNS.map(([c]) => `"${c}"`).join(', ')})
  select * from unnest(${INTAKE_COLUMNS.map(([, type], k) => `$${k + 1}::${type}[]`).join(', ')})
  on conflict (tenant_id, account_receivable_id) do nothing
  returning id`;
  const row = (tenantId: string, item: BenchChargeItem, payer: BenchPayer): unknown[] => [
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
  const arrays = (rows: unknown[][]) => INTAKE_COLUMNS.map((_, k) => rows.map((r) => r[k]));
  return { sql, row, arrays };
}
