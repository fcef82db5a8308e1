import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { appEntry } from './app-entry';
import { serviceDatabaseUrl } from '@payments/db';
import { freePort } from './free-port';

/**
 * Several instances of the system's apps, each its own OS process (apps/<app>/src/main.ts run by
 * tsx, as a container runs it) on ports of its own, so a chaos test or a bench can kill -9 one
 * instance and start it again. Shared by e2e/test/chaos.test.ts and bench/recovery.ts, bench/scale.ts.
 */

const ROOT = join(__dirname, '..', '..', '..');

/** Every app, with the variable of its listening port. */
export const APP_PORTS = {
  'bank-sandbox': 'BANK_SANDBOX_PORT',
  'clients-svc': 'CLIENTS_PORT',
  'receivables-svc': 'RECEIVABLES_PORT',
  'callback-svc': 'CALLBACK_PORT',
  'booklet-svc': 'BOOKLET_PORT',
  gateway: 'PORT',
} as const;
export type AppName = keyof typeof APP_PORTS;

/** Each app's Postgres schema: it logs in as `<schema>_svc` (see libs/db serviceDatabaseUrl). */
export const APP_SCHEMAS: Record<AppName, string> = {
  'bank-sandbox': 'bank_sandbox',
  'clients-svc': 'clients',
  'receivables-svc': 'receivables',
  'callback-svc': 'callbacks',
  'booklet-svc': 'booklets',
  gateway: 'gateway',
};

/** The services scaled out (the bank sandbox stands for the bank: one). */
export const SERVICES: readonly AppName[] = [
  'clients-svc',
  'receivables-svc',
  'callback-svc',
  'booklet-svc',
  'gateway',
];

export { freePort } from './free-port';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function answersReady(port: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(
    () => undefined,
  );
  await res?.body?.cancel().catch(() => undefined);
  return res?.status === 200;
}

/** The ports of each app's instances: how many of each, and where (known before any starts). */
export type PortPlan = Partial<Record<AppName, number[]>>;

/** Free ports for `counts[app]` instances of each app. */
export async function planPorts(counts: Partial<Record<AppName, number>>): Promise<PortPlan> {
  const plan: PortPlan = {};
  const taken = new Set<number>();
  for (const [app, count] of Object.entries(counts) as Array<[AppName, number]>) {
    plan[app] = [];
    for (let i = 0; i < count; i++) {
      plan[app].push(await freePort(taken));
    }
  }
  return plan;
}

/** The message of the last JSON log line (its err.message, else its msg), or the last line as is. */
function lastError(log: string[]): string {
  const line = log.at(-1) ?? '';
  try {
    const entry = JSON.parse(line) as { msg?: string; err?: { message?: string } };
    return [entry.msg, entry.err?.message].filter(Boolean).join(': ');
  } catch {
    return line.slice(0, 300);
  }
}

/** One instance of an app: its port stays the same across restarts. */
export class AppInstance {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private log: string[] = [];

  constructor(
    readonly app: AppName,
    readonly index: number,
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  /** Variables of this instance alone (the gateway's ADMIN_PORT), set before it starts. */
  readonly ownEnv: Record<string, string> = {};

  get name(): string {
    return `${this.app}#${this.index + 1}`;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Start-ups that failed (the process exited before it was ready) and were tried again. */
  readonly failedStarts: string[] = [];
  /** Exits of a ready instance that nobody asked for (its last log lines), each followed by a restart. */
  readonly crashes: string[] = [];
  /** Processes ended on purpose (kill): their exit is no crash. */
  private readonly ended = new WeakSet<ChildProcess>();
  private closed = false;

  /**
   * Starts the process and resolves once its /readyz answers 200. A process that exits before it is
   * ready is started again, up to `retries` times, as an orchestrator restarts a crashed container:
   * on a loaded 2-core machine a start-up's JetStream requests can time out (NATS TIMEOUT).
   */
  async start(timeoutMs = 120_000, retries = 2): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 0; ; attempt++) {
      if (this.closed) throw new Error(`${this.name} is closed`);
      this.launch();
      const outcome = await this.untilReady(deadline);
      if (outcome === 'ready') return this.superviseCrash();
      if (outcome === 'exited' && attempt < retries) {
        this.failedStarts.push(lastError(this.log));
        await sleep(1_000);
        continue;
      }
      await this.kill();
      throw new Error(
        `${this.name} ${outcome === 'exited' ? 'exited at start' : `not ready in ${timeoutMs} ms`}: ${this.log.slice(-5).join(' | ')}`,
      );
    }
  }

  /** The last lines it printed (its log, at the LOG_LEVEL it was given). */
  tail(lines = 5): string[] {
    return this.log.slice(-lines);
  }

  private launch(): void {
    const child = spawn(process.execPath, appEntry(this.app), {
      cwd: ROOT,
      // STOP_WITH_PARENT_PID: an instance stops itself if this process dies without stopping it.
      env: {
        ...process.env,
        ...this.env,
        ...this.ownEnv,
        ...(this.env.DATABASE_URL
          ? { DATABASE_URL: serviceDatabaseUrl(this.env.DATABASE_URL, APP_SCHEMAS[this.app]) }
          : {}),
        [APP_PORTS[this.app]]: String(this.port),
        STOP_WITH_PARENT_PID: String(process.pid),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.log = [];
    // The last lines only, for the message of an instance that does not come up.
    const keep = (chunk: Buffer) => {
      this.log.push(...chunk.toString().split('\n').filter(Boolean));
      this.log.splice(0, Math.max(0, this.log.length - 40));
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((r) => child.once('exit', () => r()));
  }

  private async untilReady(deadline: number): Promise<'ready' | 'exited' | 'timeout'> {
    while (!(await answersReady(this.port))) {
      if (!this.running) return 'exited';
      if (Date.now() > deadline) return 'timeout';
      await sleep(200);
    }
    return 'ready';
  }

  /**
   * As an orchestrator does (Kubernetes restartPolicy Always): a ready instance that exits when
   * nobody killed it is recorded as a crash and started again a second later.
   */
  private superviseCrash(): void {
    const child = this.child!;
    child.once('exit', () => {
      if (this.ended.has(child) || this.closed) return;
      // Node's report of an uncaught error: its message and what emitted it.
      const report = this.log.filter((line) => /^(\w*Error|error): |^Emitted 'error' event/.test(line.trim()));
      this.crashes.push((report.join(' / ') || (this.log.at(-1) ?? '')).trim().slice(0, 400));
      setTimeout(() => {
        if (!this.closed && !this.running)
          this.start().catch((err: Error) => this.crashes.push(`restart failed: ${err.message.slice(0, 300)}`));
      }, 1_000);
    });
  }

  /** kill -9 (no shutdown hook runs, as in a crash); resolves once the process is gone. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.ended.add(this.child!);
    this.child!.kill('SIGKILL');
    await this.exited;
  }

  /** kill -9, and no restart after a crash from now on. */
  async close(): Promise<void> {
    this.closed = true;
    await this.kill();
  }
}

/**
 * `npm run migrate` with `env` (its DATABASE_URL: a superuser's, as in development), as its own
 * process: every schema migrated and every role made before an app starts. Rejects with its output.
 */
export function migrateDatabase(env: Record<string, string>): Promise<void> {
  return runTool(['scripts/migrate.ts'], env, 'npm run migrate');
}

/**
 * `npm run admin -- bus provision` with `env`, as its own process like the apps (this lib does not
 * import the apps' code); rejects with its output when it fails.
 */
function provisionBus(env: Record<string, string>): Promise<void> {
  return runTool(['apps/gateway/src/transport/cli/cli.ts', 'bus', 'provision'], env, 'bus provision');
}

/** A TypeScript tool of the repository run by tsx; rejects with its output when it fails. */
function runTool(args: string[], env: Record<string, string>, what: string): Promise<void> {
  const [script, ...rest] = args;
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, script), ...rest], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${what} exited with ${code}:\n${output}`)),
    );
  });
}

/** The instances of a whole system, started against one environment (database, NATS, prefix). */
export class Fleet {
  private constructor(readonly instances: readonly AppInstance[]) {}

  /**
   * Starts the instances of a plan (apps missing from it are not started), each on its port: the bank
   * sandbox first, then the others in waves (see below). Fails, killing what started, if one does not
   * come up.
   */
  static async start(env: Record<string, string>, plan: PortPlan): Promise<Fleet> {
    const instances: AppInstance[] = [];
    for (const app of Object.keys(APP_PORTS) as AppName[])
      (plan[app] ?? []).forEach((port, i) => instances.push(new AppInstance(app, i, port, env)));
    const fleet = new Fleet(instances);
    // A gateway's admin port, free like the others: its default (PORT + 600) is a port nobody
    // checked and did collide with another instance's in CI.
    const taken = new Set(Object.values(plan).flat());
    for (const gateway of fleet.of('gateway')) {
      gateway.ownEnv.ADMIN_PORT = String(await freePort(taken));
    }
    try {
      // The services only check their schema and the bus at start: migrated and provisioned first,
      // as npm start and the deploys do.
      await migrateDatabase({ NODE_ENV: 'development', ...env });
      await provisionBus(env);
      await Promise.all(instances.filter((x) => x.app === 'bank-sandbox').map((x) => x.start()));
      // In waves, the first instance of each app, then the second...: ten instances creating the
      // same R3 streams at once on 2 cores time out their JetStream API requests (NATS TIMEOUT).
      const services = instances.filter((x) => x.app !== 'bank-sandbox');
      for (let wave = 0; services.some((x) => x.index === wave); wave++)
        await Promise.all(services.filter((x) => x.index === wave).map((x) => x.start()));
    } catch (err) {
      await fleet.killAll();
      throw err;
    }
    return fleet;
  }

  of(app: AppName): AppInstance[] {
    return this.instances.filter((x) => x.app === app);
  }

  instance(app: AppName, index: number): AppInstance {
    const found = this.of(app)[index];
    if (!found) throw new Error(`no instance ${index + 1} of ${app}`);
    return found;
  }

  /** Every start-up that failed and was tried again, by instance. */
  get failedStarts(): string[] {
    return this.instances.flatMap((x) => x.failedStarts.map((line) => `${x.name}: ${line}`));
  }

  /** Every crash of a ready instance (restarted since), by instance. */
  get crashes(): string[] {
    return this.instances.flatMap((x) => x.crashes.map((line) => `${x.name}: ${line}`));
  }

  /** kill -9 of every instance still running; crashed ones are no longer restarted. */
  async killAll(): Promise<void> {
    await Promise.all(this.instances.map((x) => x.close()));
  }
}
