import { randomBytes } from 'node:crypto';
import {
  claimStoreName,
  claimStoreRecipients,
  JobStreams,
  QueueGroups,
  Streams,
  type StreamSpec,
} from '@payments/contracts';
import { createLogger } from '@payments/logger';
import type { NatsCluster } from '@payments/test-support/nats-cluster';
import { connectBus, provisionBus, type Bus } from '../src';
import { useNatsCluster } from './support/nats-servers';

// STREAM_REPLICAS on a private 3-node cluster (nats-server 2.9.10): a stream provisioned with one
// replica is raised to three when `bus provision` runs with STREAM_REPLICAS=3, not left as it was,
// and never lowered again; the dead-letter stream and the claim stores follow the same setting.
// NATS_URL lists all three.

type TestRegistry = {
  requests: Record<string, never>;
  streams: { 'receivables.registration': { n: number } };
};

const logger = createLogger('stream-replicas-test', 'silent');
const prefix = `r${randomBytes(4).toString('hex')}`;
const jobs: StreamSpec = Streams.receivableRegistrations;
const claimStream = `OBJ_${claimStoreName(prefix, QueueGroups.receivables)}`;
let cluster: NatsCluster;
const opened: Bus<TestRegistry>[] = [];

async function open(streamReplicas: number): Promise<Bus<TestRegistry>> {
  const bus = await connectBus<TestRegistry>({
    url: cluster.url,
    prefix,
    name: `replicas-${streamReplicas}`,
    logger,
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

it('provisions R1, raises every stream, the dead letters and the claim stores to R3, and never lowers them', async () => {
  const r1 = await open(1);
  const limits = { prefix, maxBytes: 8 * 1024 * 1024, logger };
  await provisionBus(r1.connection, { ...limits, replicas: 1 });
  await r1.streams.publishJson(jobs, '{"n":1}', 'job-1');
  const names = [
    ...JobStreams.map((p) => `${prefix}_${p.stream.name}`),
    `${prefix}_dead_letters`,
    ...claimStoreRecipients().map((r) => `OBJ_${claimStoreName(prefix, r)}`),
  ];
  for (const stream of names) expect(await replicasOf(r1, stream)).toMatchObject({ numReplicas: 1, peers: 0 });

  // STREAM_REPLICAS=3: the provisioner raises every one, and says so.
  const raised = await provisionBus(r1.connection, { ...limits, replicas: 3 });
  expect(raised.entries.filter((e) => e.kind !== 'consumer').map((e) => [e.name, e.action, e.notes])).toEqual(
    names.map((name) => [name, 'raised', ['num_replicas 1 -> 3']]),
  );
  for (const stream of names) {
    const replicas = await replicasOf(r1, stream);
    expect({ stream, ...replicas }).toMatchObject({ stream, numReplicas: 3, peers: 2 });
  }
  // The job published while the stream was R1 is still there, now on three nodes.
  const jsm = await r1.connection.jetstreamManager();
  expect((await jsm.streams.info(`${prefix}_${jobs.name}`)).state.messages).toBe(1);
  expect(
    JSON.parse(new TextDecoder().decode((await jsm.streams.getMessage(`${prefix}_${jobs.name}`, { seq: 1 })).data)),
  ).toEqual({ n: 1 });

  // Provisioned again with STREAM_REPLICAS=1 (a forgotten setting): kept at 3.
  const again = await provisionBus(r1.connection, { ...limits, replicas: 1 });
  expect(again.entries.find((e) => e.name === claimStream)).toMatchObject({
    action: 'unchanged',
    notes: ['kept num_replicas 3, above the 1 asked'],
  });
  expect((await jsm.streams.info(claimStream)).config.num_replicas).toBe(3);

  // A service started with STREAM_REPLICAS=3 finds what it needs; one on an R1 bus would have refused.
  const r3 = await open(3);
  await expect(r3.streams.check(QueueGroups.receivables)).resolves.toBeUndefined();
}, 90_000);
