/**
 * `npm start`: runs every app of the system on this machine, each in its own process (as in
 * production), in development mode unless NODE_ENV says otherwise (`NODE_ENV=production npm start` is
 * a production start, which needs every app's secrets).
 *
 * Before it starts anything it checks what a fresh machine gets wrong, and says so in one line each,
 * exiting 1: a bad setting or, in production, a missing or development secret (every app's own
 * configuration is loaded here, so each app's refusal shows, not only the first app's), a port
 * already taken (naming who holds it, e.g. another npm start), Postgres or NATS out of reach (naming
 * the URL), NATS without JetStream. It then migrates every schema (`npm run migrate`: the database
 * and each service's role created on the first start) and provisions the bus (`npm run admin -- bus
 * provision`): the apps only check their schema, and their streams, consumers and claim stores. Each
 * app logs in to Postgres as its own role (DATABASE_URL's user replaced by `<schema>_svc`: development
 * trusts local logins).
 *
 * Stopping: Ctrl-C, or SIGTERM/SIGHUP to npm's pid or to this script's, stops every app gracefully
 * and exits 0 once they are all gone (a second Ctrl-C kills them at once). package.json runs this
 * as `exec node --import tsx scripts/start.ts`: npm forwards SIGTERM only to its own child, and a
 * `sh -c` or tsx CLI process in between would die of it and leave this script and the apps running.
 * If npm dies without a word (SIGKILL), this script notices and stops the apps; if this script dies
 * so, each app notices (STOP_WITH_PARENT_PID) and stops itself. If an app dies, the others are
 * stopped too and the exit code is 1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { checkBus, formatProvisionReport } from '@payments/bus';
import {
  DEV_INTER_SANDBOX_CA_FILE,
  developmentUnlessSet,
  devInterSandboxBaseUrl,
  type CommonConfig,
} from '@payments/config';
import { checkDatabaseServer } from '@payments/db';
import { describeStartupFailure, STOP_WITH_PARENT_ENV, watchParent } from '@payments/lifecycle';
import { loadBankSandboxConfig } from '@payments/bank-sandbox/src/config';
import { interDialectEnabled } from '@payments/bank-sandbox/src/inter-config';
import { provisionFromConfig } from '@payments/gateway/src/transport/bus/bus-provision';
import { loadGatewayConfig } from '@payments/gateway/src/config';
import { appConfigProblems } from './start/app-configs';
import { APP_SCHEMAS, appDatabaseUrl, migrateAll } from './migrate/run';
import { findPortConflicts } from './start/ports';
import { loadStartSettings } from './start/settings';

const root = join(__dirname, '..');

/** A second stop request within this window is the same one delivered twice, not a "kill now". */
const REPEAT_WINDOW_MS = 1_000;

/** Beyond the apps' own shutdown grace, how long to wait before killing what is left. */
const KILL_MARGIN_MS = 5_000;

const say = (line: string) => console.error(`[start] ${line}`);

async function main(): Promise<void> {
  let config: CommonConfig;
  let ports: Array<{ app: string; variable: string; port: number }>;
  let peerUrls: Record<string, string>;
  // The apps' environment: this one, in development unless NODE_ENV is set.
  const env = developmentUnlessSet(process.env);
  try {
    ({ common: config, ports, peerUrls } = loadStartSettings(env));
  } catch (err) {
    fail([describeStartupFailure(err)?.message ?? String(err)]);
  }
  const appEnv: Record<string, string | undefined> = { ...env, ...peerUrls };
  const refusals = appConfigProblems(
    ports.map((p) => p.app),
    appEnv,
  );
  if (refusals.length > 0) fail(refusals);

  // The gateway's second port, its admin API (ADMIN_PORT, PORT + 600 by default): checked with the others.
  const adminPort = loadGatewayConfig(appEnv).adminPort;
  Object.assign(appEnv, consoleGatewayUrls(appEnv, ports, adminPort));
  // The bank sandbox's second port, its Inter dialect (mutual TLS; in development with its own CA): checked too.
  const inter = interDialect(appEnv);
  const problems = await preflight(config, [
    ...ports,
    { app: 'gateway', variable: 'ADMIN_PORT', port: adminPort },
    ...(inter ? [{ app: 'bank-sandbox', variable: 'BANK_SANDBOX_INTER_PORT', port: inter.port }] : []),
  ]);
  if (problems.length > 0) fail(problems);
  // The apps only check that their schema is migrated: migrated first, as a deploy's Job does.
  await migrate(env);
  // The apps only check the bus at start (they may not create streams): provisioned first, as a deploy's Job does.
  await provision(config);

  const children = new Map<string, ChildProcess>();
  let stopping = false;
  let killTimer: NodeJS.Timeout | undefined;
  const startedAt = Date.now();

  let stoppingSince = 0;
  const stopAll = (why: string) => {
    if (stopping) {
      // One Ctrl-C arrives twice: from the terminal (to the whole process group) and forwarded by npm.
      if (Date.now() - stoppingSince < REPEAT_WINDOW_MS) return;
      // Asked twice: no more waiting.
      say(`${why} again: killing ${[...children.keys()].join(', ') || 'nothing left'}`);
      for (const child of children.values()) child.kill('SIGKILL');
      return;
    }
    stopping = true;
    stoppingSince = Date.now();
    say(`${why}: stopping ${[...children.keys()].join(', ')}`);
    for (const child of children.values()) child.kill('SIGTERM');
    killTimer = setTimeout(() => {
      say(
        `still running after ${config.shutdownGraceMs + KILL_MARGIN_MS} ms: killing ${[...children.keys()].join(', ')}`,
      );
      process.exitCode = 1;
      for (const child of children.values()) child.kill('SIGKILL');
    }, config.shutdownGraceMs + KILL_MARGIN_MS);
  };

  for (const { app } of ports) {
    const entry = join(root, 'apps', app, 'src', 'main.ts');
    if (!existsSync(entry)) continue;
    const child = spawn(process.execPath, ['--import', 'tsx', entry], {
      cwd: root,
      stdio: 'inherit',
      env: { ...appEnv, ...databaseUrlOf(app, config.databaseUrl), [STOP_WITH_PARENT_ENV]: String(process.pid) },
    });
    children.set(app, child);
    child.on('exit', (code, signal) => {
      children.delete(app);
      if (!stopping && code === 0) {
        // Apps exit 0 only once told to stop: a terminal's Ctrl-C reaches the whole process group, and
        // an app may finish draining before this script has handled its own SIGINT. A stop, not a crash.
        stopAll(`${app} stopped`);
      } else if (!stopping) {
        process.exitCode = 1;
        stopAll(`${app} exited (code ${code}, signal ${signal})`);
      } else if (code !== 0) {
        process.exitCode = 1;
      }
      if (children.size === 0) {
        clearTimeout(killTimer);
        process.exit();
      }
    });
  }
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stopAll(signal));
  // Behind npm: if npm dies without forwarding a signal (SIGKILL), stop rather than run on unseen.
  if (process.env.npm_lifecycle_event) {
    const npmPid = process.ppid;
    watchParent(npmPid, () => stopAll(`npm (pid ${npmPid}) exited`));
  }

  const gateway = ports.find((p) => p.app === 'gateway')!.port;
  say(`starting ${[...children.keys()].join(', ')} (pid ${process.pid}); gateway on http://localhost:${gateway}`);
  if (ports.every((p) => p.port !== 0)) {
    await waitUntilReady(ports, () => stopping || children.size < ports.length);
    if (!stopping && children.size === ports.length) {
      const sandbox = ports.find((p) => p.app === 'bank-sandbox')!.port;
      const consolePort = ports.find((p) => p.app === 'console')!.port;
      say(
        `ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s: gateway http://localhost:${gateway} (API reference http://localhost:${gateway}/docs), ` +
          `bank sandbox http://localhost:${sandbox}${inter && inter.port !== 0 ? ` (Inter dialect ${devInterSandboxBaseUrl(inter.port)}, CA ${inter.caFile})` : ''}, ` +
          `admin API http://localhost:${adminPort}, ` +
          `console http://localhost:${consolePort}; Ctrl-C stops every app`,
      );
    }
  }
}

/** The bank sandbox's Inter dialect when it will run (TLS files given, or development): its port and CA file. */
function interDialect(env: Record<string, string | undefined>): { port: number; caFile: string } | null {
  const { inter } = loadBankSandboxConfig(env);
  if (!interDialectEnabled(inter)) return null;
  return { port: inter.port, caFile: inter.tls?.caFile ?? DEV_INTER_SANDBOX_CA_FILE };
}

/**
 * The console reaches the gateway's two ports by URL (GATEWAY_URL, GATEWAY_ADMIN_URL): when only the
 * ports are moved, the URLs follow them unless set explicitly (a port of 0 is known to the gateway alone).
 */
function consoleGatewayUrls(
  env: Record<string, string | undefined>,
  ports: ReadonlyArray<{ variable: string; port: number }>,
  adminPort: number,
): Record<string, string> {
  const urls: Record<string, string> = {};
  const port = ports.find((p) => p.variable === 'PORT')?.port;
  if (!env.GATEWAY_URL && port) urls.GATEWAY_URL = `http://127.0.0.1:${port}`;
  if (!env.GATEWAY_ADMIN_URL && adminPort) urls.GATEWAY_ADMIN_URL = `http://127.0.0.1:${adminPort}`;
  return urls;
}

/** `npm run migrate`, in this process: one line per schema; a failure ends the start in one line. */
async function migrate(env: Record<string, string | undefined>): Promise<void> {
  try {
    await migrateAll(env, { onResult: (line) => say(`migrate: ${line}`) });
  } catch (err) {
    fail([`migrate (npm run migrate) failed: ${explain(err)}`]);
  }
}

/** An app with a schema logs in as its role; the console has no database. */
function databaseUrlOf(app: string, url: string): Record<string, string> {
  return app in APP_SCHEMAS ? { DATABASE_URL: appDatabaseUrl(app, url) } : {};
}

/**
 * `npm run admin -- bus provision`, in this process: every stream, consumer and claim store of
 * BUS_PREFIX created or raised before the apps check them; a failure ends the start in one line.
 */
async function provision(config: CommonConfig): Promise<void> {
  try {
    const report = await provisionFromConfig(config);
    say(formatProvisionReport(report).split('\n').pop() ?? '');
  } catch (err) {
    fail([`bus provision (npm run admin -- bus provision) failed: ${explain(err)}`]);
  }
}

const explain = (err: unknown) =>
  describeStartupFailure(err)?.message ?? `${err instanceof Error ? err.message : String(err)}`;

/** Every problem that would stop an app from starting, one line each: ports, Postgres, NATS. */
async function preflight(
  config: CommonConfig,
  ports: Array<{ app: string; variable: string; port: number }>,
): Promise<string[]> {
  const [portProblems, database, bus] = await Promise.all([
    findPortConflicts(ports.filter((p) => p.port !== 0)),
    // Postgres reached, nothing created: a refused start leaves no database behind (the migrate step
    // creates it once every check has passed).
    checkDatabaseServer(config.databaseUrl).then(() => undefined, explain),
    // With the apps' credentials (and their user's inbox), so an authenticated NATS is checked as they will see it.
    checkBus(config.natsUrl, { credentials: config, name: config.natsUser }).then(() => undefined, explain),
  ]);
  return [...portProblems, ...[database, bus].filter((p): p is string => p !== undefined)];
}

/** Polls every app's /readyz until all answer 200, or `give up` says so. */
async function waitUntilReady(
  ports: Array<{ port: number }>,
  giveUp: () => boolean,
  timeoutMs = 120_000,
): Promise<void> {
  const pending = new Set(ports.map((p) => p.port));
  const deadline = Date.now() + timeoutMs;
  while (pending.size > 0 && !giveUp() && Date.now() < deadline) {
    await Promise.all(
      [...pending].map(async (port) => {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(
          () => undefined,
        );
        if (res?.status === 200) pending.delete(port);
        await res?.body?.cancel();
      }),
    );
    if (pending.size > 0) await new Promise((r) => setTimeout(r, 300));
  }
}

function fail(lines: string[]): never {
  for (const line of lines) say(line);
  process.exit(1);
}

void main();
