import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freePort } from '@payments/test-support/free-port';

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
 * output says `ready`. BENCH_PROFILE=<app> writes a CPU profile of that app to /tmp/prof.
 */
export function startApp(app: string, env: Record<string, string>, ready: string): Promise<ChildProcess> {
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
    child.once('exit', (code) => reject(new Error(`${app} exited ${code}`)));
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
