import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { StreamSpec } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { connectBus, type Bus } from '../src';

/**
 * consumeFairlyInBatches on a real NATS: each handler call gets up to maxBatch messages of one key; a
 * key's message published behind another key's backlog is handled before most of that backlog, in a
 * batch of its own; every message is handled once and acked. The oracle is what the handler was
 * given and the stream's and consumer's state on the server, not the consumer's own queues.
 */

const logger = createLogger('fair-batch-consumer-test', 'silent');
const prefix = `t${randomBytes(4).toString('hex')}`;
const jobSchema = Type.Object({ key: Type.String({ minLength: 1 }), n: Type.Integer() });
const streamOf = <N extends string>(name: N) =>
  ({
    name,
    subject: `${name}.todo`,
    consumer: `${name}-worker`,
    duplicateWindowMs: 60_000,
    messageSchema: jobSchema,
  }) as const satisfies StreamSpec;
const backlog = streamOf('backlog');
const mixed = streamOf('mixed');
const specs = [backlog, mixed];
type Job = { key: string; n: number };
type TestRegistry = {
  requests: Record<string, never>;
  streams: Record<(typeof specs)[number]['subject'], Job>;
};
let bus: Bus<TestRegistry>;

beforeAll(async () => {
  bus = await connectBus<TestRegistry>({ url: 'nats://127.0.0.1:4222', prefix, name: 'fair-batch-test', logger });
  await bus.streams.ensure(...specs);
});

afterAll(async () => {
  const jsm = await bus.connection.jetstreamManager();
  for (const name of [...specs.map((s) => s.name), 'dead_letters'])
    await jsm.streams.delete(`${prefix}_${name}`).catch(() => undefined);
  await bus.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (check: () => boolean | Promise<boolean>, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(20);
  }
};

const ACK_WAIT_MS = 1_000;

/** Every handler call's messages, as `<key><n>`, and their delivery counts; each call takes `ms`. */
function recordingHandler(ms: number) {
  const calls: string[][] = [];
  const deliveries: number[] = [];
  const handler = async (jobs: Job[], info: { deliveryCounts: number[] }) => {
    calls.push(jobs.map((job) => `${job.key}${job.n}`));
    deliveries.push(...info.deliveryCounts);
    await sleep(ms);
  };
  return { calls, deliveries, handler };
}

/** Each call of one key and at most `maxBatch`; each message handled once, none redelivered; the stream emptied. */
async function expectHandledOnceEach(
  spec: (typeof specs)[number],
  rec: ReturnType<typeof recordingHandler>,
  expected: string[],
  maxBatch: number,
) {
  for (const call of rec.calls) {
    expect(call.length).toBeLessThanOrEqual(maxBatch);
    expect(new Set(call.map((id) => id[0])).size).toBe(1);
  }
  expect(rec.calls.flat().sort()).toEqual([...expected].sort());
  expect(new Set(rec.deliveries)).toEqual(new Set([1]));
  // Work-queue stream: an acked message leaves it; nothing is left pending an ack on the consumer.
  const jsm = await bus.connection.jetstreamManager();
  const stream = bus.streams.streamName(spec);
  expect((await jsm.streams.info(stream)).state.messages).toBe(0);
  const consumer = await jsm.consumers.info(stream, spec.consumer);
  expect([consumer.num_ack_pending, consumer.num_redelivered]).toEqual([0, 0]);
}

const ids = (key: string, count: number) => Array.from({ length: count }, (_, n) => `${key}${n}`);

it('handles a key behind a backlog of another in a batch of its own, before most of the backlog', async () => {
  const A = 60;
  const maxBatch = 5;
  for (let n = 0; n < A; n++) await bus.streams.publish(backlog, { key: 'A', n }, `backlog-A-${n}`);
  await bus.streams.publish(backlog, { key: 'B', n: 0 }, 'backlog-B-0');
  const rec = recordingHandler(30);
  const consumption = await bus.streams.consumeFairlyInBatches(backlog, rec.handler, {
    key: (job) => job.key,
    concurrency: 1,
    maxBatch,
    ackWaitMs: ACK_WAIT_MS,
  });
  try {
    await until(() => rec.calls.flat().length === A + 1);
    const bCall = rec.calls.findIndex((call) => call.includes('B0'));
    expect(rec.calls[bCall]).toEqual(['B0']);
    // Stream order would put B after all 60 of A's; turns put it within A's first few batches.
    const aBefore = rec.calls.slice(0, bCall).flat().length;
    expect(aBefore).toBeLessThan(3 * maxBatch);
    // One slot: A's batches in A's order.
    expect(rec.calls.flat().filter((id) => id.startsWith('A'))).toEqual(ids('A', A));
    await sleep(ACK_WAIT_MS + 500); // a redelivery would show within an ack wait
    await expectHandledOnceEach(backlog, rec, [...ids('A', A), 'B0'], maxBatch);
  } finally {
    await consumption.stop();
  }
});

it('never mixes keys in a call, with interleaved keys and two slots', async () => {
  const maxBatch = 4;
  const keys = ['A', 'B', 'C'];
  const each = 15;
  for (let n = 0; n < each; n++)
    for (const key of keys) await bus.streams.publish(mixed, { key, n }, `mixed-${key}-${n}`);
  const rec = recordingHandler(20);
  const consumption = await bus.streams.consumeFairlyInBatches(mixed, rec.handler, {
    key: (job) => job.key,
    concurrency: 2,
    maxBatch,
    ackWaitMs: ACK_WAIT_MS,
  });
  try {
    await until(() => rec.calls.flat().length === keys.length * each);
    // Batches of several messages happened: the test is not about batches of one.
    expect(rec.calls.some((call) => call.length > 1)).toBe(true);
    // Each batch oldest first.
    for (const call of rec.calls) {
      const ns = call.map((id) => Number(id.slice(1)));
      expect(ns).toEqual([...ns].sort((x, y) => x - y));
    }
    await sleep(ACK_WAIT_MS + 500);
    await expectHandledOnceEach(
      mixed,
      rec,
      keys.flatMap((key) => ids(key, each)),
      maxBatch,
    );
  } finally {
    await consumption.stop();
  }
});
