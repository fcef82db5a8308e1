import { randomBytes } from 'node:crypto';
import type { Exchange, StreamSpec } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import type { NatsCluster } from '@payments/test-support/nats-cluster';
import { connectBus, type Bus } from '../src';
import { useNatsCluster } from './support/nats-servers';

// STREAM_REPLICAS on a private 3-node cluster (nats-server 2.9.10): a stream created with one replica
// is raised to three when a service starts with STREAM_REPLICAS=3, not left as it was; the
// dead-letter stream and the claim-check store follow the same setting. NATS_URL lists all three.

type TestRegistry = {
  requests: { 'big.echo': Exchange<{ text: string }, { length: number }> };
  streams: Record<string, never>;
};

const logger = createLogger('stream-replicas-test', 'silent');
const prefix = `r${randomBytes(4).toString('hex')}`;
const jobs: StreamSpec = { name: 'jobs', subject: 'jobs.run', consumer: 'jobs-worker', duplicateWindowMs: 60_000 };
let cluster: NatsCluster;
const opened: Bus<TestRegistry>[] = [];

async function open(streamReplicas: number): Promise<Bus<TestRegistry>> {
  const bus = await connectBus<TestRegistry>({
    url: cluster.url,
    prefix,
    name: `replicas-${streamReplicas}`,
    logger,
    claimCheckThreshold: 1024,
    streamSettings: { streamReplicas, streamMaxBytes: 8 * 1024 * 1024 },
  });
  opened.push(bus);
  return bus;
}

async function replicasOf(bus: Bus<TestRegistry>, stream: string) {
  // A new replica reports itself once it has caught up: wait for both peers, not just the config.
  const jsm = await bus.connection.jetstreamManager();
  const deadline = Date.now() + 15_000;
  for (;;) {
    const info = await jsm.streams.info(stream);
    const peers = info.cluster?.replicas ?? [];
    if (peers.length >= info.config.num_replicas - 1 || Date.now() > deadline)
      return { numReplicas: info.config.num_replicas, peers: peers.length, leader: info.cluster?.leader };
    await new Promise((r) => setTimeout(r, 200));
  }
}

useNatsCluster(opened, (started) => {
  cluster = started;
});

it('connects with a NATS_URL listing the three servers', async () => {
  expect(cluster.url.split(',')).toHaveLength(3);
  const bus = await open(1);
  expect(cluster.nodes.map((n) => `127.0.0.1:${n.clientPort}`)).toContain(bus.connection.getServer());
});

it('raises an existing R1 stream, its dead-letter stream and the claim-check store to R3', async () => {
  const r1 = await open(1);
  await r1.streams.ensure(jobs);
  await r1.streams.deadLetters.ensure();
  await r1.streams.publishJson(jobs, '{"n":1}', 'job-1');
  r1.serve('big.echo', async ({ text }) => ({ length: text.length }), { queue: 'echo' });
  await r1.connection.flush();
  expect(await r1.request('big.echo', { text: 'x'.repeat(4_000) })).toEqual({ length: 4_000 });
  for (const stream of [`${prefix}_jobs`, `${prefix}_dead_letters`, `OBJ_${prefix}_claims`])
    expect(await replicasOf(r1, stream)).toMatchObject({ numReplicas: 1, peers: 0 });
  await r1.close();

  const r3 = await open(3);
  await r3.streams.ensure(jobs);
  await r3.streams.deadLetters.ensure();
  r3.serve('big.echo', async ({ text }) => ({ length: text.length }), { queue: 'echo' });
  await r3.connection.flush();
  expect(await r3.request('big.echo', { text: 'y'.repeat(4_000) })).toEqual({ length: 4_000 });
  for (const stream of [`${prefix}_jobs`, `${prefix}_dead_letters`, `OBJ_${prefix}_claims`]) {
    const replicas = await replicasOf(r3, stream);
    expect({ stream, ...replicas }).toMatchObject({ stream, numReplicas: 3, peers: 2 });
  }
  // The job published while the stream was R1 is still there, now on three nodes.
  const jsm = await r3.connection.jetstreamManager();
  expect((await jsm.streams.info(`${prefix}_jobs`)).state.messages).toBe(1);
  expect(
    JSON.parse(new TextDecoder().decode((await jsm.streams.getMessage(`${prefix}_jobs`, { seq: 1 })).data)),
  ).toEqual({ n: 1 });
}, 60_000);
