import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { CallbacksDatabase } from '../src/db/schema';
import type { ClaimedEvent } from '../src/domain/callback-event';
import { EventStore } from '../src/domain/event-store';
import { WorkerLease } from '../src/domain/worker-lease';
import { WorkerRegistry } from '../src/domain/worker-registry';

// Worker leases (migration 0006) against a real Postgres: a worker's claims live while its heartbeat
// does, and pass to another worker as soon as its lease lapses (kill -9, stall), not when each row's
// own lease (a minute) ends.

let test: { url: string; drop: () => Promise<void> };
let db: Kysely<CallbacksDatabase>;
let store: EventStore;
let registry: WorkerRegistry;
const leases: WorkerLease[] = [];

beforeAll(async () => {
  test = await createTestDatabase();
  db = createDatabase<CallbacksDatabase>({ url: test.url, schema: SCHEMA, poolSize: 4 });
  await migrateToLatest(db, SCHEMA, migrations);
  store = new EventStore(db);
  registry = new WorkerRegistry(db);
});
afterAll(async () => {
  await db?.destroy();
  await test?.drop();
});
beforeEach(async () => {
  await sql`truncate attempts, events, event_log, event_keys, workers`.execute(db);
});
afterEach(async () => {
  await Promise.all(leases.splice(0).map((l) => l.stop()));
});

/** The row-level lease: far longer than any test here, so only the worker lease can free a claim. */
const CLAIM_MS = 60_000;
const NO_BUSY_HOSTS = { left: new Map<string, number>(), perHost: 100 };
const silent = createLogger('worker-leases-test', 'silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function newEvents(n: number) {
  return Array.from({ length: n }, () => ({
    eventId: `evt_${randomUUID().replace(/-/g, '')}`,
    tenantId: randomUUID(),
    eventType: 'receivable.registered',
    url: 'http://erp.test/cb',
    body: '{}',
  }));
}

/** n events stored and claimed at ingest by `workerId`. */
async function claimedBy(workerId: string, n: number): Promise<ClaimedEvent[]> {
  const events = newEvents(n);
  return store.ingest(events, new Set(events.map((e) => e.eventId)), CLAIM_MS, workerId);
}

function startedLease(
  leaseMs: number,
  onLapse: () => void = () => undefined,
  leaseStore = registry,
): Promise<WorkerLease> {
  const lease = new WorkerLease({ store: leaseStore, leaseMs, logger: silent, onLapse });
  leases.push(lease);
  return lease.start().then(() => lease);
}

const claimable = () => store.claimDue(100, CLAIM_MS, NO_BUSY_HOSTS, randomUUID());

it("gives a dead worker's claims to others once its lease lapses, and not before", async () => {
  const dead = randomUUID();
  await registry.register(dead, 600);
  const held = await claimedBy(dead, 5);
  expect(held).toHaveLength(5);

  expect(await registry.reapLapsed()).toEqual({ workers: 0, events: 0 });
  expect(await claimable()).toEqual([]);

  await sleep(700); // no heartbeat: the lease lapses
  expect(await registry.reapLapsed()).toEqual({ workers: 1, events: 5 });
  expect(await registry.reapLapsed()).toEqual({ workers: 0, events: 0 });
  const taken = await claimable();
  expect(taken.map((e) => e.eventId).sort()).toEqual(held.map((e) => e.eventId).sort());
  // The dead worker's tokens were cleared: a late outcome of its attempts is fenced off.
  expect(taken.every((e) => held.every((h) => h.leaseToken !== e.leaseToken))).toBe(true);
});

it('keeps the claims of a worker whose heartbeat runs, over many lease lengths', async () => {
  const lease = await startedLease(400);
  const workerId = lease.claimingAs!;
  expect(workerId).toMatch(/^[0-9a-f-]{36}$/);
  await claimedBy(workerId, 3);
  for (let i = 0; i < 6; i++) {
    await sleep(250);
    expect(await registry.reapLapsed()).toEqual({ workers: 0, events: 0 });
  }
  expect(await claimable()).toEqual([]);
  expect(lease.claimingAs).toBe(workerId);
});

it('hands over at once on a graceful stop', async () => {
  const lease = await startedLease(60_000);
  await claimedBy(lease.claimingAs!, 2);
  await lease.stop();
  expect(lease.claimingAs).toBeUndefined();
  expect(await registry.reapLapsed()).toEqual({ workers: 1, events: 2 });
  expect(await claimable()).toHaveLength(2);
});

it('never revives a lapsed lease: the worker drops what it held and claims under a new identity', async () => {
  let failing = false;
  const down = () => Promise.reject(new Error('Postgres down'));
  const flaky: WorkerRegistry = Object.assign(Object.create(registry) as WorkerRegistry, {
    register: (id: string, ms: number) => (failing ? down() : registry.register(id, ms)),
    renew: (id: string, ms: number) => (failing ? down() : registry.renew(id, ms)),
  });
  let lapses = 0;
  const lease = await startedLease(400, () => (lapses += 1), flaky);
  const before = lease.claimingAs!;
  const held = await claimedBy(before, 4);

  failing = true; // heartbeats fail: the lease lapses in memory and in Postgres
  await sleep(600);
  expect(lease.holds).toBe(false);
  expect(lease.claimingAs).toBeUndefined();
  failing = false;
  await sleep(300); // the next heartbeat registers a new identity
  expect(lapses).toBe(1);
  const after = lease.claimingAs;
  expect(after).toMatch(/^[0-9a-f-]{36}$/);
  expect(after).not.toBe(before);

  // The old identity's claims are reaped like a dead worker's; the new identity is alive.
  expect(await registry.reapLapsed()).toEqual({ workers: 1, events: 4 });
  const taken = await claimable();
  expect(taken.map((e) => e.eventId).sort()).toEqual(held.map((e) => e.eventId).sort());
  expect(await db.selectFrom('workers').select('worker_id').execute()).toEqual([{ worker_id: after }]);
});

it('leaves rows claimed without a worker (an instance of the previous version) to their own lease', async () => {
  const events = newEvents(1);
  // The previous version's five-argument claim function still exists and claims without a worker.
  await store.ingest(events, new Set(), CLAIM_MS);
  const { rows } = await sql<{ event_id: string; worker_id: string | null }>`
    select event_id, worker_id from claim_due_events(10, make_interval(secs => 60), '{}'::text[], '{}'::int[], 100)`.execute(
    db,
  );
  expect(rows).toEqual([{ event_id: events[0].eventId, worker_id: null }]);
  const dead = randomUUID();
  await registry.register(dead, 1);
  await sleep(20);
  expect(await registry.reapLapsed()).toEqual({ workers: 1, events: 0 });
  expect(await claimable()).toEqual([]);
});
