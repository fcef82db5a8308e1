import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { StreamSpec } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { connectBus, type Bus } from '../src';

/**
 * Short ack waits with heartbeats, on a real NATS: a live handler keeps its job however long it runs
 * (working() every third of the ack wait), and a job whose consumer is gone comes back to another
 * after one ack wait, not minutes.
 */

const logger = createLogger('job-heartbeat-test', 'silent');
const prefix = `t${randomBytes(4).toString('hex')}`;
const jobSchema = Type.Object({ n: Type.Integer() });
const streamOf = <N extends string>(name: N) =>
  ({
    name,
    subject: `${name}.todo`,
    consumer: `${name}-worker`,
    duplicateWindowMs: 60_000,
    messageSchema: jobSchema,
  }) as const satisfies StreamSpec;
const longJobs = streamOf('long');
const orphaned = streamOf('orphaned');
const batched = streamOf('batched');
const queued = streamOf('queued');
const batchQueue = streamOf('batchqueue');
const specs = [longJobs, orphaned, batched, queued, batchQueue];
type TestRegistry = {
  requests: Record<string, never>;
  streams: Record<(typeof specs)[number]['subject'], { n: number }>;
};

const connect = (name: string) => connectBus<TestRegistry>({ url: 'nats://127.0.0.1:4222', prefix, name, logger });
let bus: Bus<TestRegistry>;

beforeAll(async () => {
  bus = await connect('job-heartbeat-test');
  // Every case consumes with a 1 s ack wait: the consumers are provisioned with it.
  await bus.streams.provisionWith({ ackWaitMs: 1_000 }, ...specs);
});
afterAll(async () => {
  const jsm = await bus.connection.jetstreamManager();
  for (const name of [...specs.map((s) => s.name), 'dead_letters'])
    await jsm.streams.delete(`${prefix}_${name}`).catch(() => undefined);
  await bus.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('keeps a job whose handler runs three ack waits long: it is handled once', async () => {
  const deliveries: number[] = [];
  const consumption = await bus.streams.consumeEach(
    longJobs,
    async ({ n }, info) => {
      deliveries.push(n * 100 + info.deliveryCount);
      await sleep(3_000);
      return 'done';
    },
    { ackWaitMs: 1_000 },
  );
  await bus.streams.publish(longJobs, { n: 1 }, 'long-1');
  await sleep(4_500);
  await consumption.stop();
  expect(deliveries).toEqual([101]);
});

it('keeps the jobs consumeEach holds for a busy slot: each handled once, however long the queue', async () => {
  const deliveries: string[] = [];
  // One slot, jobs of 1.5 ack waits each: the fourth waits 4.5 ack waits for its turn.
  const consumption = await bus.streams.consumeEach(
    queued,
    async ({ n }, info) => {
      deliveries.push(`${n}#${info.deliveryCount}`);
      await sleep(1_500);
      return 'done';
    },
    { concurrency: 1, ackWaitMs: 1_000 },
  );
  for (let n = 1; n <= 4; n++) await bus.streams.publish(queued, { n }, `queued-${n}`);
  const end = Date.now() + 15_000;
  while (deliveries.length < 4 && Date.now() < end) await sleep(100);
  await sleep(1_600);
  await consumption.stop();
  expect(deliveries).toEqual(['1#1', '2#1', '3#1', '4#1']);
});

it('keeps a batch whose handler runs three ack waits long', async () => {
  let calls = 0;
  const consumption = await bus.streams.consume(
    batched,
    async () => {
      calls += 1;
      await sleep(3_000);
    },
    { ackWaitMs: 1_000 },
  );
  await bus.streams.publish(batched, { n: 1 }, 'batched-1');
  await sleep(4_500);
  await consumption.stop();
  expect(calls).toBe(1);
});

it('keeps the messages waiting behind a slow batch: each handled once', async () => {
  const seen: string[] = [];
  // Batches of 2, each taking 1.5 ack waits: the last of 8 messages waits 4.5 ack waits for its batch.
  const consumption = await bus.streams.consume(
    batchQueue,
    async (items, info) => {
      items.forEach((item, i) => seen.push(`${item.n}#${info.deliveryCounts[i]}`));
      await sleep(1_500);
    },
    { maxBatch: 2, ackWaitMs: 1_000 },
  );
  for (let n = 1; n <= 8; n++) await bus.streams.publish(batchQueue, { n }, `batchqueue-${n}`);
  const end = Date.now() + 20_000;
  while (seen.length < 8 && Date.now() < end) await sleep(100);
  await sleep(1_600);
  await consumption.stop();
  expect([...seen].sort()).toEqual(['1#1', '2#1', '3#1', '4#1', '5#1', '6#1', '7#1', '8#1']);
});

it('gives the job of a consumer that went away to another within about one ack wait', async () => {
  // The first consumer's connection dies mid-job (as a kill -9 would leave it): no ack, no heartbeat.
  const doomed = await connect('doomed');
  const started = { at: 0 };
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const doomedConsumption = await doomed.streams.consumeEach(
    orphaned,
    async () => {
      started.at = Date.now();
      await doomed.connection.close();
      await released;
      return 'done';
    },
    { ackWaitMs: 1_000 },
  );
  await bus.streams.publish(orphaned, { n: 1 }, 'orphaned-1');
  const end = Date.now() + 10_000;
  while (started.at === 0 && Date.now() < end) await sleep(20);
  let takenOverAt = 0;
  const survivor = await bus.streams.consumeEach(
    orphaned,
    async () => {
      takenOverAt = Date.now();
      return 'done';
    },
    { ackWaitMs: 1_000 },
  );
  while (takenOverAt === 0 && Date.now() < end) await sleep(20);
  await survivor.stop();
  release();
  await doomedConsumption.stop();
  expect(takenOverAt).toBeGreaterThan(0);
  expect(takenOverAt - started.at).toBeLessThan(3_000);
});
