/**
 * The previous release, built from git, run beside today's code: its sources at the release tag
 * (`git archive`, no worktree in the shared repository), its own `npm ci`, and its own `npm start`,
 * exactly as it ran when it was released (each app through tsx, nothing to build).
 *
 * The tree is kept under the system's temp directory, keyed by the tag's commit, so only the first
 * run pays for the install; it is prepared beside and renamed into place once complete, so a run
 * killed half-way leaves nothing a later run would take for ready.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { asEnv, freeAppPorts, freePort, killLeftovers, Launched, ready, ROOT } from './launcher';

const run = promisify(execFile);

/** The release before this one: its tag (PREVIOUS_RELEASE overrides it, e.g. to try another commit). */
export const PREVIOUS_RELEASE = process.env.PREVIOUS_RELEASE || 'v0.31.0';

/** The marker of a tree whose install completed. */
const READY_FILE = '.previous-release-ready';
const START_TIMEOUT_MS = 420_000;
const STOP_TIMEOUT_MS = 30_000;

export interface ReleaseTree {
  tag: string;
  commit: string;
  dir: string;
  /** How long preparing it took in this run (0: taken from the cache). */
  preparedInMs: number;
  /** Of which `npm ci`. */
  installMs: number;
}

/**
 * The commit of each release tag, for a clone that lacks the tags (a mirror or CI checkout that
 * fetched branches only): the tag wins when present, and must name the same commit. Each is a main
 * that passed CI and was deployed; the commit recorded for v0.28.0 before was on a history that did
 * not land, and is in no clone.
 */
const RELEASE_COMMITS: Readonly<Record<string, string>> = {
  'v0.28.0': '160e1fe378e83f1d38e365a9d56afa879117567d',
  'v0.29.0': 'cdf6e8e2451ae786e3b712ad7580bfde1915dffa',
  'v0.30.0': '42f8c48a94818fb7be3e2453780bc5ffc2e75155',
  'v0.31.0': 'f1e91622c4b1e5912a596b626b595f692fd8e333',
};

/** The commit a tag names, or an error saying how to get the tag. */
export async function releaseCommit(tag = PREVIOUS_RELEASE): Promise<string> {
  const tagged = await revParse(`${tag}^{commit}`);
  const recorded = RELEASE_COMMITS[tag];
  if (tagged !== undefined && recorded !== undefined && tagged !== recorded)
    throw new Error(`release tag ${tag} names ${tagged}, not the recorded ${recorded}`);
  const commit = tagged ?? (recorded === undefined ? undefined : await revParse(`${recorded}^{commit}`));
  if (commit === undefined)
    throw new Error(
      `release tag ${tag} is not in this clone (git fetch --tags; or set PREVIOUS_RELEASE to the previous release's tag)`,
    );
  return commit;
}

async function revParse(name: string): Promise<string | undefined> {
  try {
    const { stdout } = await run('git', ['-C', ROOT, 'rev-parse', '--verify', '--quiet', name]);
    return stdout.trim();
  } catch {
    return undefined;
  }
}

/** The previous release's sources with their dependencies installed: from the cache, or prepared now. */
export async function previousReleaseTree(tag = PREVIOUS_RELEASE): Promise<ReleaseTree> {
  const commit = await releaseCommit(tag);
  const dir = join(tmpdir(), `payments-release-${commit.slice(0, 12)}`);
  if (existsSync(join(dir, READY_FILE))) return { tag, commit, dir, preparedInMs: 0, installMs: 0 };
  const t0 = Date.now();
  const partial = `${dir}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  try {
    await run('sh', ['-c', `git -C "$0" archive --format=tar "$1" | tar -x -C "$2"`, ROOT, commit, partial]);
    const i0 = Date.now();
    await run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: partial,
      env: releaseEnv({}),
      maxBuffer: 64 * 1024 * 1024,
    });
    const installMs = Date.now() - i0;
    await writeFile(join(partial, READY_FILE), `${tag} ${commit}\n`);
    // Another run may have finished first: its tree is as good as ours.
    await rm(dir, { recursive: true, force: true });
    await rename(partial, dir);
    return { tag, commit, dir, preparedInMs: Date.now() - t0, installMs };
  } catch (err) {
    await rm(partial, { recursive: true, force: true });
    throw err;
  }
}

/**
 * The environment of a process of the previous release: this one's, without what jest and tsx put
 * in it (NODE_ENV=test, NODE_OPTIONS), in development as a developer's `npm start` runs.
 */
function releaseEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  delete base.NODE_OPTIONS;
  delete base.JEST_WORKER_ID;
  return { ...base, NODE_ENV: 'development', ...env };
}

export interface RunningRelease {
  gatewayUrl: string;
  sandboxUrl: string;
  /** The previous release's own admin CLI (`npm run admin -- ...`), JSON output parsed. */
  admin<T>(args: string[]): Promise<T>;
  /** What its `npm start` printed. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * The previous release's `npm start` on free ports, against `databaseUrl` and under `busPrefix`: it
 * provisions its bus, migrates (each app at start, as it did then) and waits until every app is ready.
 */
export async function startRelease(
  tree: ReleaseTree,
  options: { databaseUrl: string; busPrefix: string; env?: Record<string, string> },
): Promise<RunningRelease> {
  const ports = await freeAppPorts();
  const env: Record<string, string> = {
    ...asEnv(ports),
    ADMIN_PORT: String(await freePort()),
    BANK_SANDBOX_INTER_PORT: String(await freePort()),
    DATABASE_URL: options.databaseUrl,
    BUS_PREFIX: options.busPrefix,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    ...options.env,
  };
  const launched = new Launched(
    spawn('npm', ['start'], {
      cwd: tree.dir,
      env: releaseEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    }),
  );
  const stop = async () => {
    if (launched.child.exitCode === null && launched.child.signalCode === null) {
      try {
        process.kill(-launched.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await launched.exit(STOP_TIMEOUT_MS).catch(() => undefined);
    }
    killLeftovers(`BUS_PREFIX=${options.busPrefix}`, [launched]);
  };
  try {
    await readyOrExit(launched, Object.values(ports));
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    gatewayUrl: `http://127.0.0.1:${ports.PORT}`,
    sandboxUrl: `http://127.0.0.1:${ports.BANK_SANDBOX_PORT}`,
    async admin<T>(args: string[]): Promise<T> {
      // Through its npm script, which names its CLI wherever that release keeps it.
      const { stdout } = await run('npm', ['run', '-s', 'admin', '--', ...args, '--json'], {
        cwd: tree.dir,
        env: releaseEnv(env),
      });
      return JSON.parse(stdout) as T;
    },
    output: () => launched.output,
    stop,
  };
}

/**
 * Every app answers 200 on /readyz (each migrated and connected); an exit before that is a failure to
 * start. Its npm start's own "ready" line is no proof: it is printed after 120 s even if apps are not.
 */
async function readyOrExit(launched: Launched, ports: number[]): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void launched.exited.then((e) => (exited = e));
  const pending = new Set(ports);
  while (pending.size > 0) {
    if (exited) {
      throw new Error(`the previous release's npm start exited (${JSON.stringify(exited)}):\n${launched.output}`);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `the previous release's apps on ports ${[...pending].join(', ')} were not ready within ${START_TIMEOUT_MS} ms:\n${launched.output}`,
      );
    }
    for (const port of [...pending]) if (await ready(port)) pending.delete(port);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Today's `npm run migrate` (this repository's code) on `databaseUrl`, over a direct connection:
 * what a deploy of this release runs before any app. Rejects with its output when it fails.
 */
export async function migrateWithTodaysCode(databaseUrl: string): Promise<{ ms: number; output: string }> {
  const t0 = Date.now();
  const { stdout, stderr } = await run('npm', ['run', '-s', 'migrate'], {
    cwd: ROOT,
    env: releaseEnv({ MIGRATION_DATABASE_URL: databaseUrl, DATABASE_URL: databaseUrl }),
    maxBuffer: 16 * 1024 * 1024,
  }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`npm run migrate failed: ${err.message}\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
  });
  return { ms: Date.now() - t0, output: `${stdout}${stderr}` };
}
