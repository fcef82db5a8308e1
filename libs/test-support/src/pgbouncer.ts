/**
 * A PgBouncer of a test's own (Debian's `pgbouncer`), in transaction mode in front of the shared
 * Postgres, as a managed pooler runs it: startup options (`options=-c search_path=...`) are ignored,
 * server connections are shared between clients transaction by transaction, and nothing is reset
 * between them. One per test file, on a free loopback port; stopped (with every process it started)
 * by `stop`, and by the kernel if the test process dies first.
 *
 * PgBouncer is PGBOUNCER_PATH, else /usr/sbin/pgbouncer. Without it a test file skips, saying so on
 * the console; with CI=true it fails instead (.ci/run installs Debian's pgbouncer first).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port';

const run = promisify(execFile);
const DEFAULT_PGBOUNCER = '/usr/sbin/pgbouncer';
/** PgBouncer refuses to run as root: as root (CI) it runs as the Postgres server's own user. */
const RUN_AS = 'postgres';
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

/** The Postgres superuser the tests use reads the admin console. */
export const PGBOUNCER_ADMIN_USER = 'postgres';

/** Where PgBouncer is, or undefined when it is not installed here. */
export function pgbouncerPath(): string | undefined {
  const path = process.env.PGBOUNCER_PATH || DEFAULT_PGBOUNCER;
  return existsSync(path) ? path : undefined;
}

/**
 * `describe` when PgBouncer is here; otherwise, outside CI, `describe.skip` after one clear line (and
 * under CI=true a failing test naming what is missing, so a CI machine without it cannot pass quietly).
 */
export function describeWithPgBouncer(name: string, body: () => void): void {
  if (pgbouncerPath()) {
    describe(name, body);
    return;
  }
  const missing = `PgBouncer not found at ${process.env.PGBOUNCER_PATH || DEFAULT_PGBOUNCER} (set PGBOUNCER_PATH, or apt-get install pgbouncer)`;
  if (process.env.CI) {
    describe(name, () => {
      it('needs PgBouncer', () => {
        throw new Error(`${missing}: PgBouncer tests cannot be skipped under CI=true`);
      });
    });
    return;
  }
  console.warn(`SKIPPED PgBouncer tests "${name}": ${missing}`);
  describe.skip(name, body);
}

export interface PgBouncerOptions {
  /** The database to pool, as a direct URL (postgres://user@host:port/database); its name is kept. */
  upstream: string;
  /**
   * Every role that will log in through it. With trust authentication PgBouncer still refuses a user
   * its auth file does not list; the user name goes to Postgres as given, so each role keeps its own
   * pool and its own role settings (search_path, timeouts).
   */
  users: string[];
  /** Server connections per (database, user) pool; PgBouncer's default is 20. */
  poolSize?: number;
}

/** A running PgBouncer. */
export class PgBouncer {
  private exited = false;
  private readonly exit: Promise<void>;
  private output = '';

  private constructor(
    private readonly dir: string,
    private readonly child: ChildProcess,
    readonly port: number,
    /** The pooled database's name (the same name as upstream). */
    readonly database: string,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exit = new Promise((resolve) =>
      child.once('exit', () => {
        this.exited = true;
        resolve();
      }),
    );
  }

  /** Writes the configuration into a temporary directory and starts PgBouncer on a free port. */
  static async start(options: PgBouncerOptions): Promise<PgBouncer> {
    const binary = pgbouncerPath();
    if (!binary) throw new Error('PgBouncer is not installed (see describeWithPgBouncer)');
    const upstream = new URL(options.upstream);
    const database = decodeURIComponent(upstream.pathname.slice(1));
    const dir = await mkdtemp(join(tmpdir(), 'pgbouncer-'));
    try {
      const port = await freePort();
      await writeFile(join(dir, 'pgbouncer.ini'), configuration(dir, port, database, upstream, options));
      await writeFile(join(dir, 'userlist.txt'), authFile([...options.users, PGBOUNCER_ADMIN_USER]));
      if (asRoot()) await run('chown', ['-R', `${RUN_AS}:${RUN_AS}`, dir]);
      const bouncer = new PgBouncer(dir, launch(binary, join(dir, 'pgbouncer.ini')), port, database);
      await bouncer.waitListening();
      return bouncer;
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** The pooled database through PgBouncer, as `user`. */
  url(user: string): string {
    return `postgres://${encodeURIComponent(user)}@127.0.0.1:${this.port}/${encodeURIComponent(this.database)}`;
  }

  /**
   * PgBouncer's admin console (`SHOW POOLS`, `SHOW SERVERS`, `SHOW STATS`): the virtual database
   * `pgbouncer`. It speaks only the simple query protocol: send queries without parameters.
   */
  get adminUrl(): string {
    return `postgres://${encodeURIComponent(PGBOUNCER_ADMIN_USER)}@127.0.0.1:${this.port}/pgbouncer`;
  }

  /** What PgBouncer logged so far (its log file and its output), for a failing test's message. */
  async log(): Promise<string> {
    const file = await readFile(join(this.dir, 'pgbouncer.log'), 'utf8').catch(() => '');
    return `${file}${this.output}`;
  }

  /** Stops PgBouncer (open client connections are cut) and deletes its directory; safe to call twice. */
  async stop(): Promise<void> {
    if (!this.exited) {
      // SIGTERM is PgBouncer's immediate shutdown; SIGINT would wait for every client to leave.
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await this.exit;
      clearTimeout(timer);
    }
    await rm(this.dir, { recursive: true, force: true });
  }

  private async waitListening(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (this.exited) throw new Error(`PgBouncer exited at start:\n${await this.log()}`);
      if (await accepts(this.port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    await this.stop();
    throw new Error(`PgBouncer did not listen on ${this.port} within ${START_TIMEOUT_MS} ms`);
  }
}

function configuration(dir: string, port: number, database: string, upstream: URL, options: PgBouncerOptions): string {
  const host = upstream.hostname || '127.0.0.1';
  const upstreamPort = upstream.port || '5432';
  return [
    '[databases]',
    // No user= here: each client's own role logs in to Postgres, with its own role settings.
    `${quoteName(database)} = host=${host} port=${upstreamPort} dbname=${quoteName(database)}`,
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    `pidfile = ${join(dir, 'pgbouncer.pid')}`,
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    `admin_users = ${PGBOUNCER_ADMIN_USER}`,
    `stats_users = ${PGBOUNCER_ADMIN_USER}`,
    'pool_mode = transaction',
    // What a managed pooler does with what node-postgres may send: accepted and dropped. Any other
    // startup parameter (statement_timeout, search_path...) is refused, as such a pooler refuses it.
    'ignore_startup_parameters = extra_float_digits,options',
    // Transaction mode resets nothing between clients: an app that leaves session state behind shows it.
    'server_reset_query =',
    'max_client_conn = 2000',
    `default_pool_size = ${options.poolSize ?? 20}`,
    '',
  ].join('\n');
}

function authFile(users: string[]): string {
  return [...new Set(users)].map((u) => `"${u.replace(/"/g, '""')}" ""`).join('\n') + '\n';
}

/** A database name as PgBouncer's ini file reads it. */
function quoteName(name: string): string {
  return /^[A-Za-z0-9_]+$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/**
 * As root: `setpriv` becomes user postgres and then is PgBouncer (no process in between, so a kill
 * reaches it), and asks the kernel to stop it with SIGTERM when the test process dies.
 */
function launch(binary: string, ini: string): ChildProcess {
  const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
  if (!asRoot()) return spawn(binary, [ini], { stdio });
  return spawn(
    'setpriv',
    [`--reuid=${RUN_AS}`, `--regid=${RUN_AS}`, '--init-groups', '--pdeathsig=TERM', '--', binary, ini],
    { stdio },
  );
}

function asRoot(): boolean {
  return process.getuid?.() === 0;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
