import { sql, type Kysely } from 'kysely';
import type { Bus } from '@payments/bus';
import type { StreamSpec } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { enqueue, enqueueStatement, OutboxRelay, type OutboxDatabase } from '../src';
import { startOutboxFixture, type OutboxFixture } from './outbox-fixture';

const logger = createLogger('outbox-test', 'silent');
const spec = {
  name: 'jobs',
  subject: 'jobs.todo',
  consumer: 'jobs-worker',
  duplicateWindowMs: 60_000,
} as const satisfies StreamSpec;
/** This test's stream and its message, as BusRegistry holds the system's. */
type TestRegistry = { requests: Record<string, never>; streams: { 'jobs.todo': { i: number; ids?: string[] } } };
/** enqueue, with this test's stream typed as the system's streams are. */
const enqueueTest = enqueue<OutboxDatabase, TestRegistry['streams']>;
let fixture: OutboxFixture<TestRegistry>;
let db: Kysely<OutboxDatabase>;
let bus: Bus<TestRegistry>;

beforeAll(async () => {
  fixture = await startOutboxFixture<TestRegistry>('outbox-test', spec);
  ({ db, bus } = fixture);
});
afterAll(() => fixture?.stop());

it('publishes what a committed transaction enqueued, once, and nothing from a rolled-back one', async () => {
  await db.transaction().execute((trx) =>
    enqueueTest(
      trx,
      Array.from({ length: 1200 }, (_, i) => ({ stream: spec, msgId: `m${i}`, payload: { i } })),
    ),
  );
  await db
    .transaction()
    .execute(async (trx) => {
      await enqueueTest(trx, [{ stream: spec, msgId: 'ghost', payload: { i: -1 } }]);
      throw new Error('rollback');
    })
    .catch(() => undefined);
  // A duplicate row (as after a relay crash between publish and delete) is dropped by Nats-Msg-Id.
  await enqueueTest(db, [{ stream: spec, msgId: 'm0', payload: { i: 0 } }]);

  const seen: number[] = [];
  const consumption = await bus.streams.consume(spec, async (items) => {
    seen.push(...items.map((x) => x.i));
  });
  const relay = new OutboxRelay({ db, bus, streams: [spec], logger, pollIntervalMs: 50 });
  const relay2 = new OutboxRelay({ db, bus, streams: [spec], logger, pollIntervalMs: 50 }); // a second instance
  relay.start();
  relay2.start();
  try {
    const end = Date.now() + 10_000;
    while (seen.length < 1200 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    expect(seen).toHaveLength(1200);
    expect(new Set(seen).size).toBe(1200);
    expect(seen).not.toContain(-1);
    const left = await db
      .selectFrom('outbox')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(left.n)).toBe(0);
  } finally {
    await relay.stop();
    await relay2.stop();
    await consumption.stop();
  }
});

it('stores each message with its stream version, as its producer wrote it (rolling upgrades)', async () => {
  const versioned = { ...spec, version: { major: 1, minor: 4 } };
  await enqueueTest(db, [{ stream: versioned, msgId: 'versioned', payload: { i: 7 } }]);
  const row = await db
    .selectFrom('outbox')
    .select('payload')
    .where('msg_id', '=', 'versioned')
    .executeTakeFirstOrThrow();
  await db.deleteFrom('outbox').where('msg_id', '=', 'versioned').execute();
  expect(row.payload).toEqual({ i: 7, v: '1.4' });
});

it('enqueues as part of a statement of the caller: only the messages one of whose keys that statement wrote', async () => {
  await db.schema
    .createTable('things')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .execute();
  await sql`insert into things (id) values ('old')`.execute(db);
  const keys = [['old'], ['old', 'new1'], ['new2']];
  const write = (
    messages: Array<{ stream: typeof spec; msgId: string; payload: { i: number; ids?: string[] } }>,
    keysField?: string,
  ) =>
    sql<{ id: string }>`
      with written as (
        insert into things (id) select * from unnest(${['old', 'new1', 'new2']}::text[])
        on conflict (id) do nothing returning id
      ),
      queued as (${enqueueStatement<TestRegistry['streams']>(messages, { keys, among: sql`select id from written`, keysField })})
      select id from written`.execute(db);
  const stored = async () => {
    const rows = await db
      .selectFrom('outbox')
      .select(['msg_id', 'payload'])
      .where('msg_id', 'like', 'stmt%')
      .orderBy('id')
      .execute();
    await db.deleteFrom('outbox').where('msg_id', 'like', 'stmt%').execute();
    return rows;
  };

  const { rows } = await write([10, 11, 12].map((i) => ({ stream: spec, msgId: `stmt${i}`, payload: { i } })));
  expect(rows.map((r) => r.id)).toEqual(['new1', 'new2']);
  expect(await stored()).toEqual([
    { msg_id: 'stmt11', payload: { i: 11, v: '1.0' } },
    { msg_id: 'stmt12', payload: { i: 12, v: '1.0' } },
  ]);

  // A payload listing its keys names only those the statement wrote.
  await sql`delete from things where id <> 'old'`.execute(db);
  await write(
    [10, 11, 12].map((i, n) => ({ stream: spec, msgId: `stmt${i}`, payload: { i, ids: keys[n] } })),
    'ids',
  );
  expect(await stored()).toEqual([
    { msg_id: 'stmt11', payload: { i: 11, v: '1.0', ids: ['new1'] } },
    { msg_id: 'stmt12', payload: { i: 12, v: '1.0', ids: ['new2'] } },
  ]);
  await db.schema.dropTable('things').execute();
});
