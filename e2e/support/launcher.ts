import { appEntry } from '@payments/test-support/app-entry';
import { removeBus } from '@payments/test-support/bus-provision';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, isFree } from '@payments/test-support/free-port';
import { ADMIN_PORT_OFFSET } from '@payments/gateway/src/config';

/** The repository root: where `npm start` runs. */
export const ROOT = join(__dirname, '..', '..');

/** Every app `npm start` runs, with the variable of its port. */
export const APP_PORT_VARIABLES = [
  'PORT',
  'BANK_SANDBOX_PORT',
  'RECEIVABLES_PORT',
  'CLIENTS_PORT',
  'CALLBACK_PORT',
  'BOOKLET_PORT',
  'CONSOLE_PORT',
] as const;
export type AppPortVariable = (typeof APP_PORT_VARIABLES)[number];

/** A process a test started, with everything it printed. */
export class Launched {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number {
    return this.child.pid!;
  }

  get output(): string {
    return `--- stdout\n${this.stdout}\n--- stderr\n${this.stderr}`;
  }

  /** Waits for the exit, failing (with the output) after `timeoutMs`. */
  async exit(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`pid ${this.pid} still running after ${timeoutMs} ms:\n${this.output}`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * `npm <args>` in the repository, as a user types it, in a process group of its own (so a test can
 * send the group a Ctrl-C, and clean up the whole group).
 */
export function npm(args: string[], env: Record<string, string>): Launched {
  return new Launched(
    spawn('npm', args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    }),
  );
}

/** An app's entry point run directly, as a container runs it (no npm start around it). */
export function app(name: string, env: Record<string, string>): Launched {
  return new Launched(
    spawn(process.execPath, appEntry(name), {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

export { freePort };

/**
 * A free port for each app, and the gateway's PORT chosen so that its default admin port (PORT +
 * ADMIN_PORT_OFFSET, which npm start checks with the others) is free too: unchecked, it once was
 * another test's port, and npm start refused to start.
 */
export async function freeAppPorts(): Promise<Record<AppPortVariable, number>> {
  const ports = {} as Record<AppPortVariable, number>;
  const taken = new Set<number>();
  for (const variable of APP_PORT_VARIABLES) {
    let port = await freePort(taken);
    while (variable === 'PORT' && !(await adminPortFree(port, taken))) port = await freePort(taken);
    ports[variable] = port;
    if (variable === 'PORT') taken.add(port + ADMIN_PORT_OFFSET);
  }
  return ports;
}

async function adminPortFree(port: number, taken: Set<number>): Promise<boolean> {
  const admin = port + ADMIN_PORT_OFFSET;
  return !taken.has(admin) && (await isFree(admin));
}

export function asEnv(ports: Partial<Record<AppPortVariable, number>>): Record<string, string> {
  return Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)]));
}

/** True when nothing accepts a connection on 127.0.0.1:port. */
export function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

export async function ready(port: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(
    () => undefined,
  );
  await res?.body?.cancel();
  return res?.status === 200;
}

export async function waitFor(
  condition: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface SystemProcess {
  pid: number;
  ppid: number;
  command: string;
}

/**
 * The running launcher (scripts/start.ts) and app processes (apps/<app>/src/main.ts) of this
 * repository whose environment holds `marker` (e.g. `BUS_PREFIX=t1a2b3`, unique to one test).
 */
export function systemProcesses(marker: string): SystemProcess[] {
  const found: SystemProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (!command.includes('scripts/start.ts') && !/apps\/[a-z-]+\/src\/main\.ts/.test(command)) continue;
      if (!readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(marker)) continue;
      const stat = processStat(Number(entry));
      if (stat && stat.state !== 'Z') found.push({ pid: Number(entry), ppid: stat.ppid, command });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Whether the pid is a live process (not gone, not a zombie). */
export function isRunning(pid: number): boolean {
  const stat = processStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

function processStat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

/** SIGKILL to whatever a test left running: its processes found by marker, and the npm process group. */
export function killLeftovers(marker: string, launched: Launched[]): void {
  for (const p of systemProcesses(marker)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const l of launched) {
    try {
      if (l.child.exitCode === null && l.child.signalCode === null) process.kill(-l.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

export async function dropDatabase(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await client.connect();
  try {
    await client.query(`drop database if exists "${name}" with (force)`);
  } finally {
    await client.end();
  }
}

export async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await client.connect();
  try {
    return (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

/** Removes the JetStream streams and object stores created under a bus prefix. */
export const deleteStreams = removeBus;
