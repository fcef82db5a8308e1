import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

/**
 * A private NATS cluster for tests: N nats-server processes with JetStream on loopback ports, each
 * with its own store in a temporary directory, never the machine's shared server. A node can be
 * killed (kill -9 by default) and started again on the same ports and store, as a chaos test needs.
 */
export interface NatsClusterNode {
  /** The server_name: what stream info's cluster.leader and cluster.replicas[].name say. */
  readonly name: string;
  readonly clientPort: number;
  readonly url: string;
  /** Whether its process is running. */
  readonly running: boolean;
}

export interface NatsCluster {
  readonly nodes: readonly NatsClusterNode[];
  /** Every node's URL, comma-separated: a NATS_URL. */
  readonly url: string;
  /** Kills one node (SIGKILL unless told); resolves once its process has exited. */
  stop(name: string, signal?: NodeJS.Signals): Promise<void>;
  /** Starts a stopped node again (same ports, same store) and waits until it serves clients. */
  start(name: string): Promise<void>;
  /** Resolves once the JetStream meta group has a leader, as every node that runs sees it. */
  waitForMetaLeader(timeoutMs?: number): Promise<string>;
  /** Kills every node and removes the stores. */
  close(): Promise<void>;
}

export interface NatsClusterOptions {
  /** Default 3. */
  size?: number;
  /** Default /usr/sbin/nats-server (or NATS_SERVER_BIN). */
  binary?: string;
  /** Cluster name; default `test-<random>`. */
  name?: string;
  /** How long start-up may take, meta leader included; default 30 s. */
  timeoutMs?: number;
}

interface Node {
  name: string;
  clientPort: number;
  clusterPort: number;
  httpPort: number;
  configFile: string;
  process?: ChildProcess;
  exited?: Promise<void>;
  log: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`NATS test cluster: ${what} not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** The JetStream state a node's monitoring port reports (/jsz). */
async function jsz(node: Node): Promise<{ meta_cluster?: { leader?: string; cluster_size?: number } }> {
  const res = await fetch(`http://127.0.0.1:${node.httpPort}/jsz`);
  if (!res.ok) throw new Error(`jsz ${res.status}`);
  return (await res.json()) as { meta_cluster?: { leader?: string; cluster_size?: number } };
}

function configOf(node: Node, clusterName: string, routes: string[], storeDir: string): string {
  return `server_name: ${node.name}
listen: 127.0.0.1:${node.clientPort}
http: 127.0.0.1:${node.httpPort}
jetstream {
  store_dir: "${storeDir}"
  max_memory_store: 64MB
  max_file_store: 1GB
}
cluster {
  name: ${clusterName}
  listen: 127.0.0.1:${node.clusterPort}
  routes: [
${routes.map((r) => `    ${r}`).join('\n')}
  ]
}
`;
}

/**
 * Starts the cluster and resolves once every node serves clients and JetStream has a meta leader. A
 * port picked free may be taken by another test before the node binds it: the cluster is then started
 * again on new ports, a few times at most.
 */
export async function startNatsCluster(opts: NatsClusterOptions = {}): Promise<NatsCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNatsClusterOnce(opts);
    } catch (err) {
      const portTaken = err instanceof Error && err.message.includes('address already in use');
      if (!portTaken || attempt >= 3) throw err;
    }
  }
}

async function startNatsClusterOnce(opts: NatsClusterOptions): Promise<NatsCluster> {
  const size = opts.size ?? 3;
  const binary = opts.binary ?? process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
  const clusterName = opts.name ?? `test-${Math.random().toString(36).slice(2, 8)}`;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const dir = mkdtempSync(join(tmpdir(), 'nats-cluster-'));
  const nodes: Node[] = [];
  for (let i = 0; i < size; i++) {
    nodes.push({
      name: `${clusterName}-n${i + 1}`,
      clientPort: await freePort(),
      clusterPort: await freePort(),
      httpPort: await freePort(),
      configFile: join(dir, `n${i + 1}.conf`),
      log: [],
    });
  }
  for (const node of nodes) {
    const routes = nodes.filter((n) => n !== node).map((n) => `nats-route://127.0.0.1:${n.clusterPort}`);
    const storeDir = join(dir, node.name);
    mkdirSync(storeDir);
    writeFileSync(node.configFile, configOf(node, clusterName, routes, storeDir));
  }

  const find = (name: string): Node => {
    const node = nodes.find((n) => n.name === name);
    if (!node) throw new Error(`NATS test cluster: no node ${name}`);
    return node;
  };

  const launch = async (node: Node): Promise<void> => {
    const child = spawn(binary, ['-c', node.configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
    node.process = child;
    // Kept for the error message of a node that does not come up (nats-server logs to stderr).
    child.stderr?.on('data', (chunk: Buffer) => {
      node.log.push(...chunk.toString().split('\n').filter(Boolean));
      node.log.splice(0, Math.max(0, node.log.length - 50));
    });
    node.exited = new Promise((r) => child.once('exit', () => r()));
    // A node that exits (a port taken, a bad config) fails the start at once, not after the timeout.
    const exitedEarly = node.exited.then(() => {
      throw new Error(`NATS test cluster: ${node.name} exited`);
    });
    const serving = until(`${node.name} serving clients`, timeoutMs, async () =>
      (await fetch(`http://127.0.0.1:${node.httpPort}/varz`)).ok ? true : undefined,
    );
    await Promise.race([serving, exitedEarly]).catch((err: Error) => {
      throw new Error(`${err.message}; last log: ${node.log.slice(-5).join(' | ')}`);
    });
    exitedEarly.catch(() => undefined);
  };

  const stop = async (name: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const node = find(name);
    const child = node.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await node.exited;
  };

  const running = (node: Node) => !!node.process && node.process.exitCode === null && node.process.signalCode === null;

  const waitForMetaLeader = (ms = timeoutMs): Promise<string> =>
    until('a JetStream meta leader', ms, async () => {
      const live = nodes.filter(running);
      const leaders = await Promise.all(live.map(async (n) => (await jsz(n)).meta_cluster?.leader));
      const [first] = leaders;
      return first && leaders.every((l) => l === first) ? first : undefined;
    });

  const close = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => stop(n.name)));
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await Promise.all(nodes.map(launch));
    await waitForMetaLeader();
  } catch (err) {
    await close();
    throw err;
  }

  return {
    nodes: nodes.map((n) => ({
      name: n.name,
      clientPort: n.clientPort,
      url: `nats://127.0.0.1:${n.clientPort}`,
      get running() {
        return running(n);
      },
    })),
    url: nodes.map((n) => `nats://127.0.0.1:${n.clientPort}`).join(','),
    stop,
    start: (name) => launch(find(name)),
    waitForMetaLeader,
    close,
  };
}
