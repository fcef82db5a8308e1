import { sql, type Kysely } from 'kysely';
import type { Bus, Consumption } from '@payments/bus';
import type { StreamSpec } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { enqueue, OutboxRelay, type OutboxDatabase } from '../src';
import { startOutboxFixture, type OutboxFixture } from './outbox-fixture';

/**
 * A row committed while one of the relay's cycles is slow (here: Postgres takes 1.5 s to delete the
 * rows it published, as a commit does on a loaded machine) is published by a cycle of its own at once,
 * not after the slow one ends. The slowness is real: a trigger that sleeps on deleting a marked row.
 */

const logger = createLogger('outbox-cycles-test', 'silent');
const spec = {
  name: 'cycles',
  subject: 'cycles.todo',
  consumer: 'cycles-worker',
  duplicateWindowMs: 60_000,
} as const satisfies StreamSpec;
type TestRegistry = { requests: Record<string, never>; streams: { 'cycles.todo': { i: number } } };
const enqueueTest = enqueue<OutboxDatabase, TestRegistry['streams']>;
const SLOW_DELETE_S = 1.5;
let fixture: OutboxFixture<TestRegistry>;
let db: Kysely<OutboxDatabase>;
let bus: Bus<TestRegistry>;
let consumption: Consumption;
/** When each message (its `i`) reached the stream's consumer. */
const arrivedAt = new Map<number, number>();

beforeAll(async () => {
  fixture = await startOutboxFixture<TestRegistry>('outbox-cycles-test', spec);
  ({ db, bus } = fixture);
  await sql`create function svc.slow_delete() returns trigger language plpgsql as $$
    begin
      if old.msg_id like 'slow%' then perform pg_sleep(${sql.lit(SLOW_DELETE_S)}); end if;
      return old;
    end $$`.execute(db);
  await sql`create trigger slow_delete before delete on svc.outbox for each row execute function svc.slow_delete()`.execute(
    db,
  );
  consumption = await bus.streams.consume(spec, async (items) => {
    for (const item of items) if (!arrivedAt.has(item.i)) arrivedAt.set(item.i, Date.now());
  });
});
afterAll(async () => {
  await consumption?.stop();
  await fixture?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(10);
  }
};

/**
 * Enqueues a slow row (message `slow`), waits until it was published (its cycle is now deleting it,
 * slowly), then enqueues message `fast` and wakes the relay. Returns how long `fast` took to arrive.
 */
async function fastBehindSlow(cycles: number, slow: number, fast: number): Promise<number> {
  // Polls rarely: only the wakes of the commits below move it.
  const relay = new OutboxRelay({ db, bus, streams: [spec], logger, pollIntervalMs: 60_000, cycles });
  relay.start();
  try {
    await enqueueTest(db, [{ stream: spec, msgId: `slow-${slow}`, payload: { i: slow } }]);
    relay.wake();
    await until(() => arrivedAt.has(slow));
    const committedAt = Date.now();
    await enqueueTest(db, [{ stream: spec, msgId: `fast-${fast}`, payload: { i: fast } }]);
    relay.wake();
    await until(() => arrivedAt.has(fast));
    return (arrivedAt.get(fast) ?? Infinity) - committedAt;
  } finally {
    await relay.stop();
  }
}

it('publishes a row committed during a slow cycle at once, in a cycle of its own', async () => {
  const took = await fastBehindSlow(2, 1, 2);
  expect(took).toBeLessThan((SLOW_DELETE_S * 1000) / 2);
  // The slow cycle still ended and deleted what it published; nothing is left.
  const left = await db
    .selectFrom('outbox')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  expect(Number(left.n)).toBe(0);
});

it('with one cycle at a time, for comparison, the row waits for the slow cycle to end', async () => {
  const took = await fastBehindSlow(1, 3, 4);
  expect(took).toBeGreaterThan((SLOW_DELETE_S * 1000) / 2);
});
