import { randomBytes } from 'node:crypto';
import { ServiceError, type Exchange } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { connectBus, NoReplyError, type Bus } from '../src';
import { ServeSlots } from '../src/serve-slots';

// The bound on request handlers a service runs at once (BUS_SERVE_CONCURRENCY), against a real NATS:
// at most that many run, a few more wait, the rest are refused as busy (503), and a request whose
// requester stopped waiting is never started.

type TestRegistry = {
  requests: { 'slow.work': Exchange<{ ms: number }, { ok: true }> };
  streams: Record<string, never>;
};

const logger = createLogger('serve-limits-test', 'silent');
const prefix = `t${randomBytes(4).toString('hex')}`;
let server: Bus<TestRegistry>;
let client: Bus<TestRegistry>;
let running = 0;
let mostRunning = 0;
let started = 0;

beforeAll(async () => {
  server = await connectBus<TestRegistry>({
    url: 'nats://127.0.0.1:4222',
    prefix,
    name: 'server',
    logger,
    serveConcurrency: 2,
  });
  client = await connectBus<TestRegistry>({ url: 'nats://127.0.0.1:4222', prefix, name: 'client', logger });
  server.serve(
    'slow.work',
    async ({ ms }) => {
      started += 1;
      running += 1;
      mostRunning = Math.max(mostRunning, running);
      await new Promise((r) => setTimeout(r, ms));
      running -= 1;
      return { ok: true as const };
    },
    { queue: 'workers' },
  );
  await server.connection.flush();
});
afterAll(async () => {
  await client?.close();
  await server?.close();
});
beforeEach(() => {
  mostRunning = 0;
  started = 0;
});

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: unknown) => (err instanceof NoReplyError ? 'no reply' : err instanceof ServiceError ? err.code : 'other'),
  );

it('runs at most 2 at once; 8 more wait their turn; beyond that, busy at once', async () => {
  const results = await Promise.all(
    Array.from({ length: 14 }, () => outcome(client.request('slow.work', { ms: 100 }, { timeoutMs: 5_000 }))),
  );
  expect(mostRunning).toBe(2);
  expect(results.filter((r) => r === 'ok')).toHaveLength(10);
  expect(results.filter((r) => r === 'service_unavailable')).toHaveLength(4);
  expect(started).toBe(10);
});

it('never starts a request whose requester has stopped waiting', async () => {
  // Two run for 300 ms; the third waits, and its requester gives up at 200 ms: it is never started.
  const results = await Promise.all(
    Array.from({ length: 3 }, () => outcome(client.request('slow.work', { ms: 300 }, { timeoutMs: 200 }))),
  );
  expect(results).toEqual(['no reply', 'no reply', 'no reply']);
  await new Promise((r) => setTimeout(r, 500));
  expect(started).toBe(2);
});

describe('ServeSlots', () => {
  it('hands a freed slot to the oldest waiter still within its deadline', async () => {
    let clock = 0;
    const slots = new ServeSlots(1, 2, () => clock);
    const order: string[] = [];
    let finishFirst!: () => void;
    const first = slots.run(100, () => new Promise<void>((r) => (finishFirst = r)).then(() => void order.push('a')));
    const late = slots.run(10, async () => void order.push('late'));
    const second = slots.run(100, async () => void order.push('b'));
    expect(await slots.run(100, async () => void order.push('c'))).toBe('busy');
    clock = 50; // past the late one's deadline
    finishFirst();
    expect(await Promise.all([first, late, second])).toEqual(['ran', 'expired', 'ran']);
    expect(order).toEqual(['a', 'b']);
    expect(slots.size).toBe(0);
  });
});
