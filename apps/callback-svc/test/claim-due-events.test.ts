import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { CallbacksDatabase } from '../src/db/schema';
import type { ClaimedEvent } from '../src/domain/callback-event';
import { EventStore } from '../src/domain/event-store';

// The delivery queue's claim (claim_due_events, migrations 0003, 0004 and 0008, through EventStore) against a real
// Postgres: the callbacks schema migrated into a throw-away database, emptied before each test.

let test: { url: string; drop: () => Promise<void> };
let db: Kysely<CallbacksDatabase>;
let store: EventStore;

beforeAll(async () => {
  test = await createTestDatabase();
  db = createDatabase<CallbacksDatabase>({ url: test.url, schema: SCHEMA, poolSize: 4 });
  await migrateToLatest(db, SCHEMA, migrations);
  store = new EventStore(db);
});
afterAll(async () => {
  await db?.destroy();
  await test?.drop();
});
beforeEach(async () => {
  await sql`truncate attempts, events, event_log, event_keys`.execute(db);
});

const LONG_LEASE = 60_000;
const NO_BUSY_HOSTS = { left: new Map<string, number>(), perHost: 100 };

/**
 * Stores one pending event per entry, for host `host`, due `agoMs` ago (a negative value: due in the
 * future). Returns their ids in the order given.
 */
async function seed(entries: Array<{ host: string; agoMs: number; tenant?: string }>): Promise<string[]> {
  const events = entries.map((e) => ({
    eventId: `evt_${randomUUID().replace(/-/g, '')}`,
    tenantId: e.tenant ?? randomUUID(),
    eventType: 'receivable.registered',
    url: `http://${e.host}/callbacks`,
    body: '{}',
  }));
  await store.ingest(events, new Set(), LONG_LEASE);
  for (const [i, e] of entries.entries()) {
    await sql`update events set next_attempt_at = now() - make_interval(secs => ${e.agoMs / 1000}) where event_id = ${events[i].eventId}`.execute(
      db,
    );
  }
  return events.map((e) => e.eventId);
}

const ids = (claimed: ClaimedEvent[]) => claimed.map((e) => e.eventId).sort();
const sorted = (list: string[]) => [...list].sort();
const byHost = (claimed: ClaimedEvent[]) =>
  claimed.reduce<Record<string, number>>((n, e) => ({ ...n, [e.targetHost]: (n[e.targetHost] ?? 0) + 1 }), {});

it('claims due events oldest first, never more than the limit, and leaves events due later alone', async () => {
  const [e5, e1, e3, e2, e4, later] = await seed([
    { host: 'a.test', agoMs: 5_000 },
    { host: 'b.test', agoMs: 1_000 },
    { host: 'a.test', agoMs: 3_000 },
    { host: 'c.test', agoMs: 2_000 },
    { host: 'b.test', agoMs: 4_000 },
    { host: 'a.test', agoMs: -60_000 },
  ]);
  expect(ids(await store.claimDue(2, LONG_LEASE, NO_BUSY_HOSTS))).toEqual(sorted([e5, e4]));
  expect(ids(await store.claimDue(2, LONG_LEASE, NO_BUSY_HOSTS))).toEqual(sorted([e3, e2]));
  expect(ids(await store.claimDue(10, LONG_LEASE, NO_BUSY_HOSTS))).toEqual([e1]);
  expect(await store.claimDue(10, LONG_LEASE, NO_BUSY_HOSTS)).toEqual([]);
  const waiting = await db
    .selectFrom('events')
    .select(['locked_until'])
    .where('event_id', '=', later)
    .executeTakeFirstOrThrow();
  expect(waiting.locked_until).toBeNull(); // a retry scheduled for later is not claimed
  expect(await store.claimDue(0, LONG_LEASE, NO_BUSY_HOSTS)).toEqual([]);
});

it('claims only pending events: delivered and dead ones are never due', async () => {
  const [delivered, dead, pending] = await seed([
    { host: 'a.test', agoMs: 3_000 },
    { host: 'a.test', agoMs: 2_000 },
    { host: 'a.test', agoMs: 1_000 },
  ]);
  await db
    .updateTable('events')
    .set({ status: 'delivered', delivered_at: new Date() })
    .where('event_id', '=', delivered)
    .execute();
  await db.updateTable('events').set({ status: 'dead', dead_at: new Date() }).where('event_id', '=', dead).execute();
  expect(ids(await store.claimDue(10, LONG_LEASE, NO_BUSY_HOSTS))).toEqual([pending]);
});

it('gives a host no more than its remaining room, the oldest of its events, and a host it holds nothing for the per-host limit', async () => {
  const a = await seed([1, 2, 3, 4, 5].map((s) => ({ host: 'a.test', agoMs: s * 1_000 }))); // a[4] is the oldest
  const b = await seed([1, 2, 3, 4, 5].map((s) => ({ host: 'b.test', agoMs: s * 1_000 + 500 })));
  const c = await seed([1, 2].map((s) => ({ host: 'c.test', agoMs: s * 1_000 + 700 })));
  const claimed = await store.claimDue(100, LONG_LEASE, { left: new Map([['a.test', 2]]), perHost: 3 });
  expect(byHost(claimed)).toEqual({ 'a.test': 2, 'b.test': 3, 'c.test': 2 });
  expect(ids(claimed.filter((e) => e.targetHost === 'a.test'))).toEqual(sorted([a[4], a[3]]));
  expect(ids(claimed.filter((e) => e.targetHost === 'b.test'))).toEqual(sorted([b[4], b[3], b[2]]));
  expect(ids(claimed.filter((e) => e.targetHost === 'c.test'))).toEqual(sorted(c));
  // What was left over is still due and unclaimed.
  const left = await db.selectFrom('events').select('event_id').where('locked_until', 'is', null).execute();
  expect(sorted(left.map((r) => r.event_id))).toEqual(sorted([a[0], a[1], a[2], b[0], b[1]]));
});

it('skips a host without room entirely, so its older events do not use up the limit', async () => {
  await seed([1, 2, 3, 4, 5, 6].map((s) => ({ host: 'slow.test', agoMs: 10_000 + s * 1_000 })));
  const others = await seed([1, 2, 3].map((s) => ({ host: 'fast.test', agoMs: s * 1_000 })));
  const claimed = await store.claimDue(3, LONG_LEASE, {
    left: new Map([
      ['slow.test', 0],
      ['idle.test', 5],
    ]),
    perHost: 10,
  });
  expect(ids(claimed)).toEqual(sorted(others));
});

// A host that still has a little room and a backlog older than everyone else's must not fill the
// candidates: the rest of the limit goes to the other hosts (migration 0004). EventStore.claimDue
// promises "the rest take what is left", and the engine's pump stops claiming when a claim returns
// less than its limit, so a short claim here would leave the other hosts' due events waiting.
it('fills the limit from other hosts when an old backlog of a host with little room comes first', async () => {
  await seed(Array.from({ length: 8 }, (_, i) => ({ host: 'backlog.test', agoMs: 60_000 + i * 1_000 })));
  const others = await seed([1, 2, 3].map((s) => ({ host: 'other.test', agoMs: s * 1_000 })));
  const claimed = await store.claimDue(4, LONG_LEASE, { left: new Map([['backlog.test', 1]]), perHost: 10 });
  expect(byHost(claimed)).toEqual({ 'backlog.test': 1, 'other.test': 3 });
  expect(ids(claimed.filter((e) => e.targetHost === 'other.test'))).toEqual(sorted(others));
});

it('going host by host, still claims the oldest events the hosts have room for, across more hosts than the limit', async () => {
  const [backlogOldest] = await seed([100, 99, 98, 97, 96].map((s) => ({ host: 'backlog.test', agoMs: s * 1_000 })));
  const [h1Old] = await seed([50, 10].map((s) => ({ host: 'h1.test', agoMs: s * 1_000 })));
  const h2 = await seed([40, 30].map((s) => ({ host: 'h2.test', agoMs: s * 1_000 })));
  await seed([20, 5].map((s) => ({ host: 'h3.test', agoMs: s * 1_000 })));
  await seed([15, 1].map((s) => ({ host: 'h4.test', agoMs: s * 1_000 })));
  const claimed = await store.claimDue(4, LONG_LEASE, { left: new Map([['backlog.test', 1]]), perHost: 10 });
  expect(ids(claimed)).toEqual(sorted([backlogOldest, h1Old, ...h2]));
});

it('moves a claimed row out of the queue until its lease ends: not claimable meanwhile, due again after', async () => {
  const [id] = await seed([{ host: 'a.test', agoMs: 1_000 }]);
  const claimedAt = Date.now();
  const leaseMs = 1_500;
  expect(ids(await store.claimDue(10, leaseMs, NO_BUSY_HOSTS))).toEqual([id]);
  const row = await db
    .selectFrom('events')
    .select(['next_attempt_at', 'locked_until', 'status', 'attempt_count'])
    .where('event_id', '=', id)
    .executeTakeFirstOrThrow();
  expect(row).toMatchObject({ status: 'pending', attempt_count: 0 });
  expect(row.locked_until).toEqual(row.next_attempt_at); // its due time is the lease end
  expect(row.locked_until!.getTime()).toBeGreaterThanOrEqual(claimedAt + leaseMs - 50);

  // Claim until it comes back: never before the lease has run out.
  let again: ClaimedEvent[] = [];
  while (again.length === 0) {
    again = await store.claimDue(10, LONG_LEASE, NO_BUSY_HOSTS);
    if (again.length === 0) {
      expect(Date.now()).toBeLessThan(claimedAt + 30_000); // a safety net against looping forever, not a timing claim
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(leaseMs - 50);
  expect(ids(again)).toEqual([id]);
  expect(await store.claimDue(10, LONG_LEASE, NO_BUSY_HOSTS)).toEqual([]); // claimed anew, for the new lease
});

it('stores events named at ingest already claimed: they are not claimable until their lease ends', async () => {
  const events = [1, 2].map(() => ({
    eventId: `evt_${randomUUID().replace(/-/g, '')}`,
    tenantId: randomUUID(),
    eventType: 'receivable.paid',
    url: 'http://a.test/cb',
    body: '{}',
  }));
  const claimed = await store.ingest(events, new Set([events[0].eventId]), LONG_LEASE);
  expect(claimed.map((e) => e.eventId)).toEqual([events[0].eventId]);
  expect(ids(await store.claimDue(10, LONG_LEASE, NO_BUSY_HOSTS))).toEqual([events[1].eventId]);
  // The same events ingested again (a redelivered batch) are neither stored nor claimed twice.
  expect(await store.ingest(events, new Set(events.map((e) => e.eventId)), LONG_LEASE)).toEqual([]);
  expect(await store.claimDue(10, LONG_LEASE, NO_BUSY_HOSTS)).toEqual([]);
});

it('makes released claims due at once, and releases nothing but pending events', async () => {
  const [first, second, third] = await seed([
    { host: 'a.test', agoMs: 3_000 },
    { host: 'a.test', agoMs: 2_000 },
    { host: 'b.test', agoMs: 1_000 },
  ]);
  const claimed = await store.claimDue(10, LONG_LEASE, NO_BUSY_HOSTS);
  expect(ids(claimed)).toEqual(sorted([first, second, third]));
  await db
    .updateTable('events')
    .set({ status: 'delivered', delivered_at: new Date(), locked_until: null })
    .where('event_id', '=', third)
    .execute();
  await store.release(claimed);
  // Delivered, it left the queue (migration 0009); the log has it as delivered.
  const rows = await db
    .selectFrom('event_log')
    .select(['event_id', 'status', 'locked_until'])
    .orderBy('event_id')
    .execute();
  expect(rows.find((r) => r.event_id === third)).toMatchObject({ status: 'delivered' });
  expect(ids(await store.claimDue(10, LONG_LEASE, NO_BUSY_HOSTS))).toEqual(sorted([first, second]));
});

it('never gives the same row to two claims running at once', async () => {
  const seeded = await seed(Array.from({ length: 40 }, (_, i) => ({ host: `h${i % 4}.test`, agoMs: 1_000 + i * 10 })));
  const claims = await Promise.all(Array.from({ length: 4 }, () => store.claimDue(15, LONG_LEASE, NO_BUSY_HOSTS)));
  const all = claims.flatMap(ids);
  expect(new Set(all).size).toBe(all.length);
  const rest = await store.claimDue(100, LONG_LEASE, NO_BUSY_HOSTS);
  expect(sorted([...all, ...ids(rest)])).toEqual(sorted(seeded));
});

it('never gives the same row to two claims running at once when claiming host by host', async () => {
  // The oldest events are a host's with room 1: each claim goes over it and so goes host by host.
  await seed(Array.from({ length: 20 }, (_, i) => ({ host: 'backlog.test', agoMs: 60_000 + i * 10 })));
  const seeded = await seed(Array.from({ length: 40 }, (_, i) => ({ host: `h${i % 8}.test`, agoMs: 1_000 + i * 10 })));
  const backlogRoom1 = { left: new Map([['backlog.test', 1]]), perHost: 100 };
  const claims = await Promise.all(Array.from({ length: 4 }, () => store.claimDue(10, LONG_LEASE, backlogRoom1)));
  const all = claims.flatMap(ids);
  expect(new Set(all).size).toBe(all.length);
  expect(claims.flat().filter((e) => e.targetHost === 'backlog.test').length).toBeLessThanOrEqual(4);
  const rest = await store.claimDue(100, LONG_LEASE, { left: new Map([['backlog.test', 0]]), perHost: 100 });
  const others = [...claims.flat(), ...rest].filter((e) => e.targetHost !== 'backlog.test').map((e) => e.eventId);
  expect(sorted(others)).toEqual(sorted(seeded));
});

describe("each tenant's room", () => {
  const [A, B, C] = [randomUUID(), randomUUID(), randomUUID()];
  const byTenant = (claimed: ClaimedEvent[]) =>
    claimed.reduce<Record<string, number>>((n, e) => ({ ...n, [e.tenantId]: (n[e.tenantId] ?? 0) + 1 }), {});

  it('skips a tenant without room, on every host, so its old backlog does not use up the limit', async () => {
    await seed(Array.from({ length: 40 }, (_, i) => ({ host: `a${i % 8}.test`, agoMs: 60_000 + i * 100, tenant: A })));
    const b = await seed([1, 2, 3].map((s) => ({ host: 'b.test', agoMs: s * 1_000, tenant: B })));
    const room = { left: new Map<string, number>(), perHost: 100, tenantLeft: new Map([[A, 0]]), perTenant: 100 };
    expect(ids(await store.claimDue(3, LONG_LEASE, room))).toEqual(sorted(b));
  });

  it('gives a tenant no more than its room, its oldest, and fills the limit from the others', async () => {
    const a = await seed(
      Array.from({ length: 6 }, (_, i) => ({ host: `a${i}.test`, agoMs: 60_000 - i * 1_000, tenant: A })),
    );
    const b = await seed([1, 2].map((s) => ({ host: 'b.test', agoMs: s * 1_000, tenant: B })));
    const c = await seed([3, 4].map((s) => ({ host: 'c.test', agoMs: s * 1_000, tenant: C })));
    // Everything due fits in the limit: the cheap read by due time.
    const room = { left: new Map<string, number>(), perHost: 100, tenantLeft: new Map([[A, 2]]), perTenant: 1 };
    let claimed = await store.claimDue(100, LONG_LEASE, room);
    expect(byTenant(claimed)).toEqual({ [A]: 2, [B]: 1, [C]: 1 });
    expect(ids(claimed.filter((e) => e.tenantId === A))).toEqual(sorted(a.slice(0, 2)));
    expect(ids(claimed.filter((e) => e.tenantId === B))).toEqual([b[1]]);
    expect(ids(claimed.filter((e) => e.tenantId === C))).toEqual([c[1]]);
    // More due than the limit, and the oldest over the tenant's room: host by host.
    claimed = await store.claimDue(3, LONG_LEASE, { ...room, tenantLeft: new Map([[A, 1]]), perTenant: 10 });
    expect(byTenant(claimed)).toEqual({ [A]: 1, [B]: 1, [C]: 1 });
    expect(ids(claimed.filter((e) => e.tenantId === A))).toEqual([a[2]]);
  });

  it("keeps to the host's and the tenant's room together when claiming host by host", async () => {
    const a = await seed(
      Array.from({ length: 10 }, (_, i) => ({ host: 'shared.test', agoMs: 60_000 - i * 100, tenant: A })),
    );
    const b = await seed(
      Array.from({ length: 10 }, (_, i) => ({ host: `b${i % 2}.test`, agoMs: 30_000 - i * 100, tenant: B })),
    );
    const room = {
      left: new Map([['b0.test', 1]]),
      perHost: 4,
      tenantLeft: new Map([[A, 3]]),
      perTenant: 100,
    };
    const claimed = await store.claimDue(8, LONG_LEASE, room);
    expect(ids(claimed.filter((e) => e.tenantId === A))).toEqual(sorted(a.slice(0, 3)));
    expect(byHost(claimed)).toEqual({ 'shared.test': 3, 'b0.test': 1, 'b1.test': 4 });
    expect(ids(claimed.filter((e) => e.targetHost === 'b0.test'))).toEqual([b[0]]);
  });
});
