import { sql, type Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import type { StreamSpec } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { enqueue, OutboxRelay, outboxBacklogSummary, type OutboxDatabase } from '../src';
import { startOutboxFixture, type OutboxFixture } from './outbox-fixture';

/**
 * One outbox row that cannot be published (a stream the relay does not know, a message over NATS's
 * 1 MB max_payload, a full stream) does not hold back the rows behind it: they are published and
 * deleted, while it keeps its attempts, last error and next attempt, and is published once it can be.
 */

const logger = createLogger('outbox-failures-test', 'silent');
const spec = { name: 'jobs', subject: 'jobs.todo', consumer: 'jobs-worker', duplicateWindowMs: 60_000 } as const;
const full = { name: 'full', subject: 'full.todo', consumer: 'full-worker', duplicateWindowMs: 60_000 } as const;
type TestRegistry = {
  requests: Record<string, never>;
  streams: { 'jobs.todo': { i: number; pad?: string }; 'full.todo': { i: number; pad: string } };
};
const enqueueTest = enqueue<OutboxDatabase, TestRegistry['streams']>;
let fixture: OutboxFixture<TestRegistry>;
let db: Kysely<OutboxDatabase>;
let bus: Bus<TestRegistry>;
/** The same prefix, its streams limited to 4 KiB: `full` fills after three 1 KB messages. */
let smallBus: Bus<TestRegistry>;

beforeAll(async () => {
  fixture = await startOutboxFixture<TestRegistry>('outbox-failures-test', spec satisfies StreamSpec);
  ({ db, bus } = fixture);
  smallBus = await connectBus<TestRegistry>({
    url: 'nats://127.0.0.1:4222',
    prefix: bus.prefix,
    name: 'outbox-small',
    logger,
    streamSettings: { streamMaxBytes: 4 * 1024 },
  });
  await smallBus.streams.provision(full);
});
afterAll(async () => {
  const jsm = await bus.connection.jetstreamManager();
  await jsm.streams.delete(bus.streams.streamName(full)).catch(() => undefined);
  await smallBus?.close();
  await fixture?.stop();
});

const until = async (check: () => boolean | Promise<boolean>, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
};
const rows = () =>
  db.selectFrom('outbox').select(['msg_id', 'attempts', 'last_error', 'next_attempt_at']).orderBy('id').execute();

it('publishes the rows behind an unknown stream and an oversized message; those two wait with their error', async () => {
  await enqueueTest(db, [{ stream: spec, msgId: 'before', payload: { i: 1 } }]);
  // A row naming a stream this relay does not publish to (e.g. left by an older version).
  await db
    .insertInto('outbox')
    .values({ stream: 'nowhere', msg_id: 'unknown-stream', payload: JSON.stringify({ i: 2 }) })
    .execute();
  await enqueueTest(db, [
    { stream: spec, msgId: 'too-large', payload: { i: 3, pad: 'x'.repeat(1_100_000) } },
    { stream: spec, msgId: 'after', payload: { i: 4 } },
  ]);

  const seen: number[] = [];
  const consumption = await bus.streams.consume(spec, async (items) => {
    seen.push(...items.map((x) => x.i));
  });
  const relay = new OutboxRelay({ db, bus, streams: [spec], logger, pollIntervalMs: 50 });
  relay.start();
  try {
    await until(() => seen.includes(1) && seen.includes(4));
    await until(async () => (await rows()).every((r) => r.attempts >= 1));
    const left = await rows();
    expect(left.map((r) => r.msg_id)).toEqual(['unknown-stream', 'too-large']);
    expect(left[0].last_error).toBe('names stream nowhere, which this service does not publish to');
    expect(left[1].last_error).toMatch(/max.?payload/i);
    for (const r of left) expect(r.next_attempt_at!.getTime()).toBeGreaterThan(Date.now() - 1_000);
    expect(seen.sort()).toEqual([1, 4]);

    // They are tried again after their backoff (1 s, then 2 s), each time counted.
    await until(async () => (await rows()).every((r) => r.attempts >= 2), 5_000);
    const summary = await outboxBacklogSummary(db);
    expect(summary).toMatchObject({ rows: 2, failing: 2 });
    expect(summary.oldestAgeSeconds).toBeGreaterThan(0.5);
  } finally {
    await relay.stop();
    await consumption.stop();
    await db.deleteFrom('outbox').execute();
  }
});

it('keeps the rows a full stream refused, and publishes them once it has room: nothing is lost', async () => {
  const pad = 'y'.repeat(1_000);
  await enqueueTest(
    db,
    Array.from({ length: 8 }, (_, i) => ({ stream: full, msgId: `full-${i}`, payload: { i, pad } })),
  );
  await enqueueTest(db, [{ stream: spec, msgId: 'beside-full', payload: { i: 100 } }]);
  const relay = new OutboxRelay({ db, bus: smallBus, streams: [spec, full], logger, pollIntervalMs: 50 });
  relay.start();
  const seen: number[] = [];
  try {
    await until(async () => (await rows()).length === 5 && (await rows()).every((r) => r.attempts >= 1));
    const refused = await rows();
    expect(refused.every((r) => r.msg_id.startsWith('full-'))).toBe(true);
    expect(refused[0].last_error).toMatch(/^maximum bytes exceeded/);
    const jsm = await bus.connection.jetstreamManager();
    expect((await jsm.streams.info(bus.streams.streamName(full))).state.messages).toBe(3);

    // A worker takes messages off the full stream: the waiting rows follow, every one of them.
    const consumption = await smallBus.streams.consume(full, async (items) => {
      seen.push(...items.map((x) => x.i));
    });
    try {
      await until(() => seen.length === 8, 30_000);
      expect(seen.sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      await until(async () => (await rows()).length === 0);
    } finally {
      await consumption.stop();
    }
  } finally {
    await relay.stop();
  }
}, 45_000);

it('migrates: a row from before the retry columns is due at once', async () => {
  const [row] = await sql<{ attempts: number; next_attempt_at: Date | null }>`
    insert into outbox (stream, msg_id, payload) values ('jobs', 'legacy', '{"i":0}') returning attempts, next_attempt_at
  `
    .execute(db)
    .then((r) => r.rows);
  expect(row).toEqual({ attempts: 0, next_attempt_at: null });
  await db.deleteFrom('outbox').execute();
});
