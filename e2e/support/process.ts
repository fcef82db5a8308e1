import { appEntry } from '@payments/test-support/app-entry';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { provisionFromEnv as provisionBusFor } from '@payments/gateway/src/transport/bus/bus-provision';
import { appDatabaseUrl, migrateAll } from '@payments/scripts/migrate';

const root = join(__dirname, '..', '..');

/** Each database migrated once per test file: the apps only check their schema at start. */
const migrated = new Map<string, Promise<unknown>>();

function migrateOnce(env: Record<string, string>): Promise<unknown> {
  const url = env.DATABASE_URL;
  if (url === undefined) return Promise.resolve();
  let run = migrated.get(url);
  if (run === undefined) {
    run = migrateAll({ NODE_ENV: 'development', ...env });
    migrated.set(url, run);
  }
  return run;
}

/**
 * An app of the system in its own OS process, as `npm start` runs it, so a test can kill it for real:
 * the bus provisioned and the database migrated first, and the app logged in as its own role.
 */
export class AppProcess {
  private child?: ChildProcess;
  output = '';

  constructor(
    private readonly app: string,
    private readonly env: Record<string, string>,
  ) {}

  /** Starts the app and resolves once its log says `readyMessage`. */
  async start(readyMessage: string, timeoutMs = 20_000): Promise<void> {
    // The services only check the bus at start: provisioned first (idempotent), as npm start does.
    await provisionBusFor({ ...process.env, ...this.env });
    await migrateOnce(this.env);
    const database = this.env.DATABASE_URL;
    const own = database === undefined ? {} : { DATABASE_URL: appDatabaseUrl(this.app, database) };
    const child = spawn(process.execPath, appEntry(this.app), {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'info', ...this.env, ...own },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.app} not ready in ${timeoutMs} ms:\n${this.output}`)),
        timeoutMs,
      );
      const onData = (chunk: Buffer) => {
        this.output += chunk.toString();
        if (this.output.includes(readyMessage)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${this.app} exited with ${code}:\n${this.output}`));
      });
    });
  }

  /** SIGKILL: no shutdown hook runs, as in a crash or an OOM kill. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    child.removeAllListeners('exit');
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  /** SIGTERM and wait: the graceful path. */
  async stop(): Promise<number | null> {
    const child = this.child;
    if (!child || child.exitCode !== null) return child?.exitCode ?? null;
    child.removeAllListeners('exit');
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    return exited;
  }
}
