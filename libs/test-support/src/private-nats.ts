import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

const BIN = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';

/** A server config of the test's (e.g. deploy/nats rendered for its prefix) and the environment it reads. */
export interface PrivateNatsOptions {
  /** The config file's text; flags (JetStream, store, address, port) still come from the command line. */
  config?: string;
  /** Environment of the server process (the config's $VARIABLE references). */
  env?: Record<string, string>;
}

/**
 * A NATS server with JetStream of a test's own, on a free loopback port, with its store in a
 * temporary directory, that the test may kill and start again (same port, same store): the shared
 * server on 4222 serves other test files running in parallel and must never go down.
 */
export class PrivateNats {
  private child?: ChildProcess;
  output = '';

  private constructor(
    private readonly dir: string,
    readonly port: number,
    private readonly options: PrivateNatsOptions,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  static async create(options: PrivateNatsOptions = {}): Promise<PrivateNats> {
    const dir = await mkdtemp(join(tmpdir(), 'private-nats-'));
    const nats = new PrivateNats(dir, await freePort(), options);
    try {
      if (options.config !== undefined) await writeFile(join(dir, 'nats-server.conf'), options.config);
      await nats.start();
      return nats;
    } catch (err) {
      await nats.destroy();
      throw err;
    }
  }

  /** Starts the server (JetStream on, its store kept across restarts) and waits until it takes connections. */
  async start(timeoutMs = 30_000): Promise<void> {
    if (this.running) return;
    const from = this.output.length; // a restart's own log, not the previous run's
    const config = this.options.config === undefined ? [] : ['-c', join(this.dir, 'nats-server.conf')];
    const flags = ['-js', '-sd', join(this.dir, 'store'), '-a', '127.0.0.1', '-p', String(this.port)];
    const child = spawn(BIN, [...config, ...flags], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...this.options.env },
    });
    this.child = child;
    const collect = (chunk: Buffer) => (this.output += chunk.toString());
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const end = Date.now() + timeoutMs;
    while (!(this.output.slice(from).includes('Server is ready') && (await accepts(this.port)))) {
      if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}:\n${this.output}`);
      if (Date.now() > end) throw new Error(`nats-server not ready within ${timeoutMs} ms:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGKILL, as in a crash: no shutdown runs, connections drop at once. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** SIGTERM and wait for the exit. */
  async stop(): Promise<void> {
    await this.signal('SIGTERM');
  }

  /**
   * SIGSTOP, as a machine that vanished (power lost, network cut): its sockets stay open and nothing
   * answers, where a killed process's sockets close at once. thaw() resumes it; destroy() ends it either way.
   */
  freeze(): void {
    if (this.running) this.child?.kill('SIGSTOP');
  }

  /** SIGCONT: a frozen server answers again. */
  thaw(): void {
    if (this.running) this.child?.kill('SIGCONT');
  }

  /** Stops the server if it runs and deletes its store; safe to call after a failure. */
  async destroy(): Promise<void> {
    await this.signal('SIGKILL').catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A private NATS that checks logins, and the environment an app logs in with. */
export interface LoginCheckingNats {
  nats: PrivateNats;
  /** NATS_URL, NATS_USER and NATS_PASSWORD: give them to a production app. */
  env: Record<string, string>;
}

/**
 * A private nats-server (JetStream, loopback port) that checks logins, so a production app starts on
 * it: one user, `e2e`, with a random password. A connection without credentials (the test's own
 * publishers and stand-ins, apps in development, the provisioning) is taken in as that user
 * (no_auth_user), so only NATS_URL changes for them; a wrong password is still refused. The test
 * destroys it.
 */
export async function loginCheckingNats(): Promise<LoginCheckingNats> {
  // A letter first: nats-server reads an unquoted value starting with digits as a number.
  const password = `p${randomBytes(16).toString('hex')}`;
  const config = [`authorization { users = [ { user: "e2e", password: "${password}" } ] }`, 'no_auth_user: "e2e"'].join(
    '\n',
  );
  const nats = await PrivateNats.create({ config });
  return { nats, env: { NATS_URL: nats.url, NATS_USER: 'e2e', NATS_PASSWORD: password } };
}
