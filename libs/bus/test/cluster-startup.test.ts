import { randomBytes } from 'node:crypto';
import type { StreamSpec } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import type { NatsCluster } from '@payments/test-support/nats-cluster';
import { connectBus, type Bus } from '../src';
import { useNatsCluster } from './support/nats-servers';

// A service started before its 3-node cluster has a quorum (nats-server 2.9.10): the whole cluster
// restarted and only one node back, JetStream answers "temporarily unavailable" (no meta leader).
// The service's start-up requests (the account check, its R3 streams, the dead-letter stream, its
// consumer) wait for the quorum, logging each retry, rather than fail and exit.

const prefix = `q${randomBytes(4).toString('hex')}`;
const jobs = {
  name: 'jobs',
  subject: 'jobs.run',
  consumer: 'jobs-worker',
  duplicateWindowMs: 60_000,
} as const satisfies StreamSpec;
type TestRegistry = { requests: Record<string, never>; streams: { 'jobs.run': { n: number } } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let cluster: NatsCluster;
const opened: Bus<TestRegistry>[] = [];

interface Line {
  msg: string;
  target?: string;
}

function capturingLogger(lines: Line[]) {
  return createLogger('cluster-startup-test', 'warn', { write: (l: string) => lines.push(JSON.parse(l) as Line) });
}

useNatsCluster(opened, (started) => {
  cluster = started;
});

/** A service's bus on the cluster, its streams at three replicas, logging its warnings to `lines`. */
async function connectR3(name: string, lines: Line[]): Promise<Bus<TestRegistry>> {
  const bus = await connectBus<TestRegistry>({
    url: cluster.url,
    prefix,
    name,
    logger: capturingLogger(lines),
    streamSettings: { streamReplicas: 3 },
  });
  opened.push(bus);
  return bus;
}

it('waits for the quorum at start: provisioning the streams and opening a consumer succeed once it forms', async () => {
  const [n1, n2, n3] = cluster.nodes;
  // Connected while the cluster is whole; then every node goes down and only n1 comes back.
  const earlyLines: Line[] = [];
  const early = await connectR3('early', earlyLines);
  for (const node of cluster.nodes) await cluster.stop(node.name);
  await cluster.start(n1.name);

  const startedAt = Date.now();
  const earlyStart = (async () => {
    await early.streams.provision(jobs);
    const consumption = await early.streams.consumeEach(jobs, async () => 'done');
    await consumption.stop();
  })();
  // A service that starts now: even its connection's JetStream check finds no meta leader.
  const lateLines: Line[] = [];
  const lateStart = (async () => {
    const late = await connectR3('late', lateLines);
    await late.streams.provision(jobs);
    return late;
  })();
  const settled = { early: false, late: false };
  void earlyStart.then(() => (settled.early = true)).catch(() => undefined);
  void lateStart.then(() => (settled.late = true)).catch(() => undefined);

  await sleep(3_000);
  // Three seconds without a quorum: nothing has failed (an unhandled failure would reject below), nothing is done.
  expect(settled).toEqual({ early: false, late: false });
  await Promise.all([cluster.start(n2.name), cluster.start(n3.name)]);
  const [, late] = await Promise.all([earlyStart, lateStart]);
  const tookMs = Date.now() - startedAt;

  const jsm = await late.connection.jetstreamManager();
  for (const stream of [`${prefix}_jobs`, `${prefix}_dead_letters`]) {
    const info = await jsm.streams.info(stream);
    expect({ stream, replicas: info.config.num_replicas }).toEqual({ stream, replicas: 3 });
  }
  expect((await jsm.consumers.info(`${prefix}_jobs`, jobs.consumer)).name).toBe(jobs.consumer);
  // Each retry was logged, naming what it waited for.
  expect(earlyLines.map((l) => l.target)).toContain(`stream ${prefix}_jobs`);
  expect(lateLines.map((l) => l.target)).toContain('the account check ($JS.API.INFO)');
  expect(earlyLines[0].msg).toMatch(new RegExp(`^JetStream not ready for stream ${prefix}_jobs \\(`));
  expect(tookMs).toBeLessThan(25_000);
}, 40_000);
