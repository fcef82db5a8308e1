import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './instances';

const run = promisify(execFile);
const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * A Postgres cluster of a test's own, on a free port, that the test may stop and start: the shared
 * server on 5432 serves other test files running in parallel and must never go down. Postgres
 * refuses to run as root, so as root (CI) the cluster belongs to user postgres.
 */
export class PrivatePostgres {
  private running = false;

  private constructor(
    private readonly dir: string,
    readonly port: number,
  ) {}

  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  static async create(): Promise<PrivatePostgres> {
    const dir = await mkdtemp(join(tmpdir(), 'private-pg-'));
    const cluster = new PrivatePostgres(dir, await freePort());
    try {
      if (asRoot()) await run('chown', ['-R', 'postgres:postgres', dir]);
      await asPostgres(`${BIN}/initdb`, ['-D', cluster.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
      await cluster.start();
      return cluster;
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  private get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** Starts the server and waits until it accepts connections. */
  async start(): Promise<void> {
    await asPostgres(`${BIN}/pg_ctl`, [
      '-D',
      this.dataDir,
      '-l',
      join(this.dir, 'postgres.log'),
      '-w',
      '-t',
      '60',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    ]);
    this.running = true;
  }

  /** Fast shutdown: open connections are cut, as when Postgres crashes or is restarted under a service. */
  async stop(): Promise<void> {
    await asPostgres(`${BIN}/pg_ctl`, ['-D', this.dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
    this.running = false;
  }

  /** Stops the server if it runs and deletes the cluster; safe to call after a failure. */
  async destroy(): Promise<void> {
    if (this.running) await this.stop().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}

function asRoot(): boolean {
  return process.getuid?.() === 0;
}

function asPostgres(command: string, args: string[]): Promise<unknown> {
  return asRoot() ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);
}
