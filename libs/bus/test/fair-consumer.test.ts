import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { StreamSpec } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { connectBus, type Bus, type Consumption } from '../src';

/**
 * consumeFairly on a real NATS: a key with a long backlog does not hold back another key's few jobs
 * (within the window); held jobs are not redelivered while they wait, nor are those the window has
 * no room for (it does not take them); failures and poison are dead-lettered as by consumeEach. And
 * consumeFairlyInBatches, below.
 */

const logger = createLogger('fair-consumer-test', 'silent');
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
const fair = streamOf('fair');
const fifo = streamOf('fifo');
const narrow = streamOf('narrow');
const held = streamOf('held');
const failing = streamOf('failing');
const full = streamOf('full');
const spill = streamOf('spill');
const spare = streamOf('spare');
const backlog = streamOf('backlog');
const mixed = streamOf('mixed');
const specs = [fair, fifo, narrow, held, failing, full, spill, spare, backlog, mixed];
type Job = { key: string; n: number };
type TestRegistry = {
  requests: Record<string, never>;
  streams: Record<(typeof specs)[number]['subject'], Job>;
};
let bus: Bus<TestRegistry>;

beforeAll(async () => {
  bus = await connectBus<TestRegistry>({
    url: 'nats://127.0.0.1:4222',
    prefix,
    name: 'fair-consumer-test',
    logger,
    streamSettings: { jobMaxFailures: 3, jobFailureBackoffMs: 50 },
  });
  // The cases that watch for redeliveries run on consumers with a short ack wait.
  const shortAckWait: StreamSpec[] = [held, full, backlog, mixed];
  await bus.streams.provision(...specs.filter((s) => !shortAckWait.includes(s)));
  await bus.streams.provisionWith({ ackWaitMs: 1_000 }, ...shortAckWait);
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

/** Publishes `count` jobs of `key`, in order. */
async function publish(spec: (typeof specs)[number], key: string, count: number): Promise<void> {
  for (let n = 0; n < count; n++) await bus.streams.publish(spec, { key, n }, `${spec.name}-${key}-${n}`);
}

/** The order in which jobs started, as `<key><n>`, under a handler that takes `ms` per job. */
function slowHandler(ms: number) {
  const started: string[] = [];
  const handler = async (job: Job) => {
    started.push(`${job.key}${job.n}`);
    await sleep(ms);
    return 'done' as const;
  };
  return { started, handler };
}

/** How many of key A's jobs had started when the last of B's started. */
const aStartedBeforeLastB = (started: string[]) =>
  started.slice(0, started.lastIndexOf('B4')).filter((s) => s.startsWith('A')).length;

it('starts a small key between the jobs of a long backlog', async () => {
  await publish(fair, 'A', 200);
  await publish(fair, 'B', 5);
  const { started, handler } = slowHandler(10);
  const consumption = await bus.streams.consumeFairly(fair, handler, { key: (job) => job.key, concurrency: 2 });
  try {
    await until(() => started.length === 205);
    expect(started.filter((s) => s.startsWith('B'))).toEqual(['B0', 'B1', 'B2', 'B3', 'B4']);
    expect(aStartedBeforeLastB(started)).toBeLessThan(30);
    // Each key in its own order.
    expect(started.filter((s) => s.startsWith('A'))).toEqual(Array.from({ length: 200 }, (_, n) => `A${n}`));
  } finally {
    await consumption.stop();
  }
});

it('starts a key with nothing running in a spare slot at once, which a busy key never takes', async () => {
  await publish(spare, 'A', 40);
  const running = new Map<string, number>();
  let most = { A: 0, all: 0 };
  const startedAt = new Map<string, number>();
  const handler = async (job: Job) => {
    startedAt.set(`${job.key}${job.n}`, Date.now());
    running.set(job.key, (running.get(job.key) ?? 0) + 1);
    const all = [...running.values()].reduce((x, y) => x + y, 0);
    most = { A: Math.max(most.A, running.get('A') ?? 0), all: Math.max(most.all, all) };
    // A's jobs are long (as a backlog's 100-charge registrations are); B's short.
    await sleep(job.key === 'A' ? 1_000 : 10);
    running.set(job.key, (running.get(job.key) ?? 0) - 1);
    return 'done' as const;
  };
  const consumption = await bus.streams.consumeFairly(spare, handler, {
    key: (job) => job.key,
    concurrency: 2,
    spare: 1,
  });
  try {
    await until(() => startedAt.has('A1'));
    // Every regular slot runs one of A's 1 s jobs; B's jobs come one after another.
    for (let n = 0; n < 3; n++) {
      const publishedAt = Date.now();
      await bus.streams.publish(spare, { key: 'B', n }, `spare-B-${n}`);
      await until(() => startedAt.has(`B${n}`));
      // Not after one of A's jobs ended (up to 1 s): at once.
      expect((startedAt.get(`B${n}`) ?? Infinity) - publishedAt).toBeLessThan(400);
    }
    await sleep(1_500);
    // A never took the spare slot, however long its backlog.
    expect(most).toEqual({ A: 2, all: 3 });
  } finally {
    await consumption.stop();
  }
});

it('consumeEach, for comparison, starts them in stream order: B after the whole backlog', async () => {
  await publish(fifo, 'A', 200);
  await publish(fifo, 'B', 5);
  const { started, handler } = slowHandler(1);
  const consumption = await bus.streams.consumeEach(fifo, handler, { concurrency: 2 });
  try {
    await until(() => started.length === 205);
    expect(aStartedBeforeLastB(started)).toBeGreaterThanOrEqual(198);
  } finally {
    await consumption.stop();
  }
});

it('is fair only inside its window: jobs behind more than `window` of another key wait for it', async () => {
  await publish(narrow, 'A', 100);
  await publish(narrow, 'B', 5);
  const { started, handler } = slowHandler(1);
  const consumption = await bus.streams.consumeFairly(narrow, handler, {
    key: (job) => job.key,
    concurrency: 2,
    window: 10,
  });
  try {
    await until(() => started.length === 105);
    // B's first job enters the window only once at most 9 of A's are still held.
    expect(started.indexOf('B0')).toBeGreaterThanOrEqual(90);
  } finally {
    await consumption.stop();
  }
});

it('keeps held jobs from redelivery past the ack wait, and gives each handler a whole ack wait', async () => {
  await publish(held, 'A', 8);
  const runs = new Map<number, number>();
  const consumption = await bus.streams.consumeFairly(
    held,
    async (job) => {
      runs.set(job.n, (runs.get(job.n) ?? 0) + 1);
      await sleep(400);
      return 'done';
    },
    // 8 jobs one at a time take 3.2 s: the last ones wait three ack waits in the window.
    { key: (job) => job.key, concurrency: 1, ackWaitMs: 1_000 },
  );
  try {
    await until(() => runs.size === 8);
    await sleep(1_500); // a redelivery would come within an ack wait
    expect([...runs.values()]).toEqual(Array(8).fill(1));
  } finally {
    await consumption.stop();
  }
});

it('takes no more than its window has room for: jobs beyond it wait on the stream, none redelivered', async () => {
  for (let n = 1; n <= 6; n++) await bus.streams.publish(full, { key: 'A', n }, `full-A-${n}`);
  const deliveries: string[] = [];
  // One slot, a window of 2, jobs of 1.5 ack waits: the window is full for the whole run, and the jobs
  // it has no room for must not wait in the client, where no in-progress ack keeps them.
  const consumption = await bus.streams.consumeFairly(
    full,
    async (job, info) => {
      deliveries.push(`${job.n}#${info.deliveryCount}`);
      await sleep(1_500);
      return 'done';
    },
    { key: (job) => job.key, concurrency: 1, window: 2, ackWaitMs: 1_000 },
  );
  try {
    await until(() => deliveries.length >= 6, 25_000);
    await sleep(1_600); // the last job done, and one more ack wait for a redelivery to show
    expect(deliveries).toEqual(['1#1', '2#1', '3#1', '4#1', '5#1', '6#1']);
  } finally {
    await consumption.stop();
  }
}, 40_000);

it('leaves the jobs beyond its window to another instance, and stops without waiting for its pull', async () => {
  const other = await connectBus<TestRegistry>({ url: 'nats://127.0.0.1:4222', prefix, name: 'fair-other', logger });
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const mine: number[] = [];
  const theirs: number[] = [];
  const busy = await bus.streams.consumeFairly(
    spill,
    async (job) => {
      mine.push(job.n);
      await released;
      return 'done';
    },
    { key: (job) => job.key, concurrency: 1, window: 2 },
  );
  let idle: Consumption | undefined;
  try {
    await publish(spill, 'A', 6);
    await until(() => mine.length === 1);
    await sleep(200); // its window (the job running, one queued) is full
    idle = await other.streams.consumeFairly(
      spill,
      async (job) => {
        theirs.push(job.n);
        return 'done';
      },
      { key: (job) => job.key, concurrency: 4 },
    );
    await until(() => theirs.length === 4, 5_000);
    expect([mine, theirs.sort()]).toEqual([[0], [2, 3, 4, 5]]);
  } finally {
    release();
    await until(() => mine.length === 2);
    // Its window has room again and its next pull waits up to 5 s for a job: stop ends that pull.
    const stopping = Date.now();
    await busy.stop();
    expect(Date.now() - stopping).toBeLessThan(2_000);
    await idle?.stop();
    await other.close();
  }
});

it('counts failures and dead-letters as consumeEach does: a failing job, and poison', async () => {
  const calls = new Map<string, number>();
  let consumption: Consumption | undefined;
  try {
    consumption = await bus.streams.consumeFairly(
      failing,
      async (job) => {
        const id = `${job.key}${job.n}`;
        calls.set(id, (calls.get(id) ?? 0) + 1);
        if (job.key === 'broken') throw new Error('always fails');
        if (job.key === 'outage') return (calls.get(id) ?? 0) <= 4 ? { retryInMs: 20 } : 'done';
        return 'done';
      },
      { key: (job) => job.key, concurrency: 2 },
    );
    await publish(failing, 'broken', 1);
    await publish(failing, 'outage', 1);
    await bus.streams.publishJson(failing, '{"key": ', 'failing-poison');
    await publish(failing, 'fine', 1);
    await until(async () => (await bus.streams.deadLetters.list()).length === 2);
    await until(() => calls.get('outage0') === 5 && calls.get('fine0') === 1);
    const dead = await bus.streams.deadLetters.list();
    expect(dead.map((d) => [d.msg_id, d.failures, d.error.split(':')[0]]).sort()).toEqual([
      ['failing-broken-0', 3, 'always fails'],
      ['failing-poison', 1, 'undecodable message'],
    ]);
    expect(calls.get('broken0')).toBe(3);
  } finally {
    await consumption?.stop();
  }
});

/*
 * consumeFairlyInBatches: each handler call gets up to maxBatch messages of one key; a key's message
 * published behind another key's backlog is handled before most of that backlog, in a batch of its
 * own; every message is handled once and acked (the oracle: what the handler was given, and the
 * stream's and consumer's state on the server).
 */

const BATCH_ACK_WAIT_MS = 1_000;

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
  await publish(backlog, 'A', A);
  await publish(backlog, 'B', 1);
  const rec = recordingHandler(30);
  const consumption = await bus.streams.consumeFairlyInBatches(backlog, rec.handler, {
    key: (job) => job.key,
    concurrency: 1,
    maxBatch,
    ackWaitMs: BATCH_ACK_WAIT_MS,
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
    await sleep(BATCH_ACK_WAIT_MS + 500); // a redelivery would show within an ack wait
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
    ackWaitMs: BATCH_ACK_WAIT_MS,
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
    await sleep(BATCH_ACK_WAIT_MS + 500);
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
