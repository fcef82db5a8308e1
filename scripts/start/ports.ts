/**
 * `npm start`'s port check: which of the apps' ports are taken, and by whom, said in one line per
 * holder, e.g. "ports 3000 (PORT), 3100 (BANK_SANDBOX_PORT) are in use by another npm start (pid
 * 4321): stop it (Ctrl-C in its terminal, or kill 4321) or set PORT and BANK_SANDBOX_PORT to free
 * ports". Who holds a port is looked up in /proc (Linux); elsewhere the line just says it is taken.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { describeStartupFailure, portInUseMessage } from '@payments/lifecycle';

export interface AppPort {
  app: string;
  /** The environment variable that sets it. */
  variable: string;
  port: number;
}

interface Holder {
  name: string;
  stop: string;
}

/** One line per problem: ports taken (grouped by who holds them) or not allowed. */
export async function findPortConflicts(ports: AppPort[]): Promise<string[]> {
  const errors = await Promise.all(ports.map(async (p) => ({ ...p, err: await tryListen(p.port) })));
  const lines: string[] = [];
  const taken = new Map<string, { holder?: Holder; ports: AppPort[] }>();
  for (const { err, ...p } of errors) {
    if (!err) continue;
    if (err.code !== 'EADDRINUSE') {
      lines.push(
        describeStartupFailure(err, { ports: { [p.variable]: p.port } })?.message ??
          `port ${p.port} (${p.variable}): ${err.message}`,
      );
      continue;
    }
    const holder = holderOf(p.port);
    const key = holder?.name ?? '';
    const group = taken.get(key) ?? { holder, ports: [] };
    group.ports.push(p);
    taken.set(key, group);
  }
  for (const group of taken.values())
    lines.push(
      portInUseMessage(
        group.ports.sort((a, b) => a.port - b.port),
        group.holder,
      ),
    );
  return lines;
}

/** Listens on the port as the app would (every interface) and closes at once: the error, if it cannot. */
function tryListen(port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    server.listen(port, () => server.close(() => resolve(undefined)));
  });
}

/** What listens on the port, when /proc tells (Linux, a process this user may inspect). */
function holderOf(port: number): Holder | undefined {
  try {
    const pid = listeningPid(port);
    if (pid === undefined) return undefined;
    const command = commandLine(pid);
    const app = /apps\/([a-z0-9-]+)\/(?:src\/main\.ts|main\.js)/.exec(command)?.[1];
    if (app) {
      const parent = parentPid(pid);
      if (parent !== undefined && commandLine(parent).includes('scripts/start.ts')) {
        return {
          name: `another npm start (pid ${parent})`,
          stop: `stop it (Ctrl-C in its terminal, or kill ${parent})`,
        };
      }
      return { name: `a ${app} left running (pid ${pid})`, stop: `stop it (kill ${pid})` };
    }
    const name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    if (name === 'docker-proxy')
      return { name: `docker (pid ${pid}, docker-proxy)`, stop: 'stop the container (docker compose down?)' };
    return { name: `pid ${pid} (${name})`, stop: 'stop it' };
  } catch {
    return undefined;
  }
}

/** The pid of a process holding a listening TCP socket on the port. */
function listeningPid(port: number): number | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT; state 0A is LISTEN; field 9 is the socket's inode.
      if (fields.length > 9 && fields[3] === '0A' && parseInt(fields[1].split(':')[1], 16) === port)
        inodes.add(fields[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${fd}`));
        if (match && inodes.has(match[1])) return Number(entry);
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

function commandLine(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
}

function parentPid(pid: number): number | undefined {
  // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces or parentheses.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
}
