import { randomBytes } from 'node:crypto';
import { createLogger } from '@payments/logger';
import type { StreamSpec } from '@payments/contracts';
import { connectBus, type Bus } from '../src';

const logger = createLogger('streams-test', 'silent');
const prefix = `t${randomBytes(4).toString('hex')}`;
const spec = {
  name: 'work',
  subject: 'work.todo',
  consumer: 'worker',
  duplicateWindowMs: 60_000,
} as const satisfies StreamSpec;
const each = {
  name: 'each',
  subject: 'each.todo',
  consumer: 'each-worker',
  duplicateWindowMs: 60_000,
} as const satisfies StreamSpec;
/** This test's streams and their messages, as BusRegistry holds the system's. */
type TestRegistry = {
  requests: Record<string, never>;
  streams: { 'work.todo': { id: string }; 'each.todo': { id: string } };
};
let bus: Bus<TestRegistry>;

beforeAll(async () => {
  bus = await connectBus<TestRegistry>({ url: 'nats://127.0.0.1:4222', prefix, name: 'streams-test', logger });
  await bus.streams.provision(spec);
  await bus.streams.provision(spec); // a second instance starting: no error
});
afterAll(async () => {
  const jsm = await bus.connection.jetstreamManager();
  await jsm.streams.delete(bus.streams.streamName(spec)).catch(() => undefined);
  await bus.close();
});

const until = async (check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

it('drops a republished message with the same id, delivers each id once, and redelivers after a failed batch', async () => {
  const seen: string[] = [];
  let failOnce = true;
  const consumption = await bus.streams.consume(spec, async (items) => {
    if (failOnce && items.some((i) => i.id === 'b')) {
      failOnce = false;
      throw new Error('database down');
    }
    seen.push(...items.map((i) => i.id));
  });
  try {
    expect(await bus.streams.publish(spec, { id: 'a' }, 'a')).toEqual({ duplicate: false });
    expect(await bus.streams.publish(spec, { id: 'a' }, 'a')).toEqual({ duplicate: true });
    await bus.streams.publish(spec, { id: 'b' }, 'b');
    await until(() => seen.includes('a') && seen.includes('b'));
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.filter((x) => x === 'a')).toHaveLength(1);
    expect(seen.filter((x) => x === 'b')).toHaveLength(1);
    expect(failOnce).toBe(false);
  } finally {
    await consumption.stop();
  }
  // Acked messages have left the work queue.
  const jsm = await bus.connection.jetstreamManager();
  await until(() => true);
  const info = await jsm.streams.info(bus.streams.streamName(spec));
  expect(info.state.messages).toBe(0);
});

it('consumeEach acks or retries each message on its own outcome, with bounded concurrency', async () => {
  await bus.streams.provision(each);
  const attempts = new Map<string, number>();
  let running = 0;
  let maxRunning = 0;
  const consumption = await bus.streams.consumeEach(
    each,
    async ({ id }, info) => {
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((r) => setTimeout(r, 20));
      running -= 1;
      attempts.set(id, (attempts.get(id) ?? 0) + 1);
      if (id === 'flaky' && info.deliveryCount < 3) return { retryInMs: 50 }; // 1 on the first delivery
      return 'done';
    },
    { concurrency: 3 },
  );
  try {
    for (const id of ['a', 'b', 'c', 'd', 'e', 'flaky']) await bus.streams.publish(each, { id }, id);
    await until(() => attempts.size === 6 && attempts.get('flaky') === 3);
    await new Promise((r) => setTimeout(r, 200));
    expect(attempts.get('a')).toBe(1);
    expect(attempts.get('flaky')).toBe(3);
    expect(maxRunning).toBeLessThanOrEqual(3);
  } finally {
    await consumption.stop();
    const jsm = await bus.connection.jetstreamManager();
    await jsm.streams.delete(bus.streams.streamName(each)).catch(() => undefined);
  }
});
