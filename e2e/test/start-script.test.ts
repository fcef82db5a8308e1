import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  asEnv,
  databaseExists,
  deleteStreams,
  dropDatabase,
  freeAppPorts,
  freePort,
  isRunning,
  killLeftovers,
  npm,
  ready,
  refusesConnections,
  systemProcesses,
  waitFor,
  type AppPortVariable,
  type Launched,
} from '../support/launcher';

/**
 * `npm start` as a user runs it: a real npm process, every app on ports of its own, stopped the ways
 * a user stops it. Each test has its own database (created by npm start itself) and bus prefix; the
 * processes found by that prefix in their environment are the system's.
 */
const database = `test_start_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const databaseUrl = `postgres://postgres@127.0.0.1:5432/${database}`;
const prefixes: string[] = [];
const launched: Launched[] = [];

function newPrefix(): string {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  prefixes.push(prefix);
  return prefix;
}

/**
 * npm's own banner, which it prints on stdout before the script runs (the project keeps npm's
 * default log level, so that npm install shows its progress): everything start.ts prints is after it.
 */
const NPM_BANNER = /^\n> \S+ start\n> [^\n]+\n\n/;

/** What start.ts itself printed on stdout: npm's banner taken off. */
function scriptStdout(stdout: string): string {
  return stdout.replace(NPM_BANNER, '');
}

function startNpm(env: Record<string, string>): Launched {
  const run = npm(['start'], { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...env });
  launched.push(run);
  return run;
}

/** npm start with free ports, once every app answers /readyz 200: its processes, by their marker. */
async function startSystem(): Promise<{
  run: Launched;
  ports: Record<AppPortVariable, number>;
  marker: string;
  processes: ReturnType<typeof systemProcesses>;
}> {
  const ports = await freeAppPorts();
  const prefix = newPrefix();
  const run = startNpm({ ...asEnv(ports), BUS_PREFIX: prefix });
  const marker = `BUS_PREFIX=${prefix}`;
  await waitFor(
    async () => {
      if (run.child.exitCode !== null) throw new Error(`npm start exited ${run.child.exitCode}:\n${run.output}`);
      return (await Promise.all(Object.values(ports).map(ready))).every(Boolean);
    },
    120_000,
    'every app to answer /readyz 200',
  );
  // npm start polls the same /readyz on its own beat: its ready line may follow ours by a poll.
  await waitFor(() => /\[start\] ready in /.test(run.stderr), 10_000, 'npm start to say it is ready');
  const processes = systemProcesses(marker);
  return { run, ports, marker, processes };
}

/** Nothing of that system left: no process with its marker, no pid it had, no port still bound. */
async function expectAllGone(ports: Record<AppPortVariable, number>, marker: string, pids: number[]): Promise<void> {
  expect(systemProcesses(marker)).toEqual([]);
  expect(pids.filter(isRunning)).toEqual([]);
  const bound = [];
  for (const [variable, port] of Object.entries(ports))
    if (!(await refusesConnections(port))) bound.push(`${variable}=${port}`);
  expect(bound).toEqual([]);
}

afterEach(() => {
  for (const prefix of prefixes) killLeftovers(`BUS_PREFIX=${prefix}`, launched);
});

afterAll(async () => {
  await dropDatabase(database);
  for (const prefix of prefixes) await deleteStreams(prefix).catch(() => undefined);
});

describe('stopping npm start', () => {
  it('SIGTERM to the npm pid stops every app and frees every port before npm exits 0; a second npm start meanwhile says one line', async () => {
    expect(await databaseExists(database)).toBe(false);
    const { run, ports, marker, processes } = await startSystem();
    expect(await databaseExists(database)).toBe(true); // the first start creates it

    const launcher = processes.filter((p) => p.command.includes('scripts/start.ts'));
    const apps = processes.filter((p) => p.command.includes('/src/main.ts'));
    expect(launcher).toHaveLength(1);
    // npm's own child: no sh or tsx process in between to swallow npm's forwarded SIGTERM.
    expect(launcher[0].ppid).toBe(run.pid);
    expect(apps.map((p) => /apps\/([a-z-]+)\//.exec(p.command)![1]).sort()).toEqual([
      'bank-sandbox',
      'booklet-svc',
      'callback-svc',
      'clients-svc',
      'console',
      'gateway',
      'receivables-svc',
    ]);
    expect(apps.every((p) => p.ppid === launcher[0].pid)).toBe(true);
    expect(run.stderr).toMatch(
      /\[start\] ready in \d+\.\d s: gateway http:\/\/localhost:\d+ \(API reference http:\/\/localhost:\d+\/docs\)/,
    );

    // A second npm start, same ports: one line naming the running one, exit 1, nothing started.
    const second = startNpm({ ...asEnv(ports), BUS_PREFIX: marker.slice('BUS_PREFIX='.length) });
    const secondExit = await second.exit(60_000);
    const pid = launcher[0].pid;
    // The gateway's admin API port (ADMIN_PORT, PORT + 600 unless set) is checked with the apps' ports.
    const byPort = Object.entries({ ...ports, ADMIN_PORT: ports.PORT + 600 }).sort(([, a], [, b]) => a - b);
    expect(second.stderr).toBe(
      `[start] ports ${byPort.map(([v, p]) => `${p} (${v})`).join(', ')} are in use by another npm start (pid ${pid}): ` +
        `stop it (Ctrl-C in its terminal, or kill ${pid}) or set ${byPort
          .slice(0, -1)
          .map(([v]) => v)
          .join(', ')} and ${byPort[byPort.length - 1][0]} to free ports\n`,
    );
    expect(scriptStdout(second.stdout)).toBe('');
    expect(secondExit).toEqual({ code: 1, signal: null });
    expect(
      systemProcesses(marker)
        .map((p) => p.pid)
        .sort(),
    ).toEqual(processes.map((p) => p.pid).sort());

    process.kill(run.pid, 'SIGTERM');
    expect(await run.exit(60_000)).toEqual({ code: 0, signal: null });
    // Checked the moment npm is gone, without waiting: npm waited for every app.
    await expectAllGone(
      ports,
      marker,
      processes.map((p) => p.pid),
    );
  }, 180_000);

  it('Ctrl-C (SIGINT to the whole process group, as a terminal sends it) stops every app', async () => {
    const { run, ports, marker, processes } = await startSystem();
    // npm start itself and its seven apps (the console among them).
    expect(processes).toHaveLength(8);
    process.kill(-run.pid, 'SIGINT');
    const exit = await run.exit(60_000);
    expect(exit).toEqual({ code: 0, signal: null });
    await expectAllGone(
      ports,
      marker,
      processes.map((p) => p.pid),
    );
  }, 180_000);

  it('when start.ts itself is killed (SIGKILL, no chance to stop anything), every app stops by itself', async () => {
    const { run, ports, marker, processes } = await startSystem();
    const launcher = processes.find((p) => p.command.includes('scripts/start.ts'))!;
    process.kill(launcher.pid, 'SIGKILL');
    await run.exit(30_000);
    await waitFor(() => systemProcesses(marker).length === 0, 30_000, 'the orphaned apps to stop');
    await expectAllGone(
      ports,
      marker,
      processes.map((p) => p.pid),
    );
  }, 180_000);
});

describe('npm start refuses to start, in one line, what would fail', () => {
  /** npm start with free ports and `env` on top: its exit and what it printed. */
  async function refused(
    env: Record<string, string>,
  ): Promise<{ code: number | null; stdout: string; stderr: string; marker: string }> {
    const prefix = newPrefix();
    // A database of its own, which a refused start must not create.
    const fresh = `test_refused_${randomBytes(4).toString('hex')}`;
    const run = startNpm({
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${fresh}`,
      ...asEnv(await freeAppPorts()),
      BUS_PREFIX: prefix,
      ...env,
    });
    const { code } = await run.exit(60_000);
    // Nothing was started, and nothing was created.
    expect(systemProcesses(`BUS_PREFIX=${prefix}`)).toEqual([]);
    const created = await databaseExists(fresh);
    if (created) await dropDatabase(fresh);
    expect(created).toBe(false);
    return { code, stdout: run.stdout, stderr: run.stderr, marker: `BUS_PREFIX=${prefix}` };
  }

  it('NATS out of reach: names NATS_URL and the fix', async () => {
    const port = await freePort();
    const out = await refused({ NATS_URL: `nats://127.0.0.1:${port}` });
    expect(out.stderr).toBe(
      `[start] cannot reach NATS at nats://127.0.0.1:${port} (connection refused): start nats-server -js or set NATS_URL\n`,
    );
    expect(scriptStdout(out.stdout)).toBe('');
    expect(out.code).toBe(1);
  }, 60_000);

  it('PostgreSQL out of reach: names DATABASE_URL (password masked) and the fix', async () => {
    const port = await freePort();
    const out = await refused({ DATABASE_URL: `postgres://postgres:s3cret@127.0.0.1:${port}/receivables` });
    expect(out.stderr).toBe(
      `[start] cannot reach PostgreSQL at postgres://postgres:***@127.0.0.1:${port}/receivables (connection refused): start PostgreSQL or set DATABASE_URL\n`,
    );
    expect(out.code).toBe(1);
  }, 60_000);

  it('a port taken by another program: names the port, its variable and who holds it', async () => {
    const port = await freePort();
    const holder = spawn(
      process.execPath,
      ['-e', `require('net').createServer().listen(${port}, () => console.log('listening'))`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout!.once('data', () => resolve());
        holder.once('exit', (code) => reject(new Error(`the port holder exited ${code}`)));
      });
      const name = readFileSync(`/proc/${holder.pid}/comm`, 'utf8').trim();
      const out = await refused({ CLIENTS_PORT: String(port) });
      expect(out.stderr).toBe(
        `[start] port ${port} (CLIENTS_PORT) is in use by pid ${holder.pid} (${name}): stop it or set CLIENTS_PORT to a free port\n`,
      );
      expect(out.code).toBe(1);
    } finally {
      holder.kill('SIGKILL');
    }
  }, 60_000);

  it("NODE_ENV=production without secrets: every app's missing secrets, one line per app", async () => {
    const out = await refused({ NODE_ENV: 'production' });
    const lines = out.stderr.split('\n').filter((l) => l !== '');
    const bus = 'NATS_USER/NATS_PASSWORD or NATS_CREDS is missing';
    // Every app, not only the first to stop: each one's own refusal, naming each variable.
    const expected: Record<string, string[]> = {
      'clients-svc': [bus],
      'receivables-svc': [
        'PROVIDER_API_KEY is missing',
        'PROVIDER_WEBHOOK_SECRET is missing',
        'CREDENTIALS_ENCRYPTION_KEY is missing',
        'DOWNLOAD_LINK_SECRET is missing',
        bus,
      ],
      'booklet-svc': ['DOWNLOAD_LINK_SECRET is missing', bus],
      'callback-svc': [bus],
      'bank-sandbox': ['BANK_SANDBOX_API_KEY is missing', 'BANK_SANDBOX_WEBHOOK_SECRET is missing'],
      gateway: [
        'JWT_PRIVATE_KEY is missing',
        'DOWNLOAD_LINK_SECRET is missing',
        'CREDENTIALS_ENCRYPTION_KEY is missing',
        bus,
      ],
      console: ['CONSOLE_SESSION_KEY is missing'],
    };
    expect(lines.map((l) => /^\[start\] ([a-z-]+): /.exec(l)?.[1])).toEqual(Object.keys(expected));
    for (const [app, problems] of Object.entries(expected)) {
      const line = lines.find((l) => l.startsWith(`[start] ${app}: production refuses to start`)) ?? '';
      expect({ app, missing: problems.filter((p) => !line.includes(p)) }).toEqual({ app, missing: [] });
    }
    expect(scriptStdout(out.stdout)).toBe('');
    expect(out.code).toBe(1);
  }, 60_000);

  it('a bad setting: names the variable', async () => {
    const out = await refused({ BOOKLET_PORT: 'abc' });
    expect(out.stderr).toBe('[start] BOOKLET_PORT must be an integer >= 0, got "abc"\n');
    expect(out.code).toBe(1);
  }, 60_000);

  // A second NATS server, without JetStream: when nats-server is installed here (not only in a container).
  const natsServer = (process.env.PATH ?? '')
    .split(':')
    .concat('/usr/sbin')
    .map((dir) => join(dir, 'nats-server'))
    .find((p) => existsSync(p));
  (natsServer ? it : it.skip)(
    'NATS without JetStream: says to restart it with -js',
    async () => {
      const port = await freePort();
      const server = spawn(natsServer!, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
      try {
        await waitFor(async () => !(await refusesConnections(port)), 10_000, 'nats-server to listen');
        const out = await refused({ NATS_URL: `nats://127.0.0.1:${port}` });
        expect(out.stderr).toBe(
          `[start] NATS at nats://127.0.0.1:${port} has JetStream turned off: restart it as nats-server -js (or enable jetstream in its config)\n`,
        );
        expect(out.code).toBe(1);
      } finally {
        server.kill('SIGKILL');
      }
    },
    60_000,
  );
});
