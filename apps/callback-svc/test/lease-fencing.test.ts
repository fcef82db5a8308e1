import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { CallbacksDatabase } from '../src/db/schema';
import type { ClaimedEvent } from '../src/domain/callback-event';
import { EventStore, type AttemptResult } from '../src/domain/event-store';
import type { AttemptOutcome } from '../src/domain/http-delivery';

// Fencing (migration 0005) against a real Postgres: an attempt's outcome is written only by the claim
// that holds the event's lease now, so a late attempt never overwrites a later outcome.

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

const LEASE = 60_000;
const NO_BUSY_HOSTS = { left: new Map<string, number>(), perHost: 100 };

const delivered: AttemptOutcome = {
  ok: true,
  statusCode: 200,
  error: null,
  durationMs: 5,
  responseExcerpt: null,
  retryAfterMs: null,
  refused: false,
};
const failed: AttemptOutcome = { ...delivered, ok: false, statusCode: 500, error: 'HTTP 500' };

function result(event: ClaimedEvent, outcome: AttemptOutcome): AttemptResult {
  return { event, attemptedAt: new Date(), outcome, retryAt: outcome.ok ? null : new Date(Date.now() + 60_000) };
}

/** One event claimed at ingest (the first worker's lease). */
async function claimedAtIngest(): Promise<ClaimedEvent> {
  const eventId = `evt_${randomUUID().replace(/-/g, '')}`;
  const [event] = await store.ingest(
    [{ eventId, tenantId: randomUUID(), eventType: 'receivable.registered', url: 'http://erp.test/cb', body: '{}' }],
    new Set([eventId]),
    LEASE,
  );
  return event;
}

/** The first lease runs out (its worker stalled) and another claim takes the event. */
async function claimedAgainAfterLeaseRanOut(event: ClaimedEvent): Promise<ClaimedEvent> {
  await sql`update events set next_attempt_at = now() - interval '1 second', locked_until = now() - interval '1 second' where event_id = ${event.eventId}`.execute(
    db,
  );
  const [again] = await store.claimDue(10, LEASE, NO_BUSY_HOSTS);
  expect(again.eventId).toBe(event.eventId);
  return again;
}

async function row(eventId: string) {
  // A delivered event has left the queue for the log (migration 0009).
  const event =
    (await db.selectFrom('events').selectAll().where('event_id', '=', eventId).executeTakeFirst()) ??
    (await db.selectFrom('event_log').selectAll().where('event_id', '=', eventId).executeTakeFirstOrThrow());
  const attempts = await db.selectFrom('attempts').selectAll().where('event_id', '=', eventId).execute();
  return { event, attempts };
}

it('gives every claim a new lease token', async () => {
  const first = await claimedAtIngest();
  const second = await claimedAgainAfterLeaseRanOut(first);
  expect(first.leaseToken).toMatch(/^[0-9a-f-]{36}$/);
  expect(second.leaseToken).toMatch(/^[0-9a-f-]{36}$/);
  expect(second.leaseToken).not.toBe(first.leaseToken);
});

it('a late failed attempt does not turn a later delivery back', async () => {
  const first = await claimedAtIngest();
  const second = await claimedAgainAfterLeaseRanOut(first);
  expect((await store.recordAttempts([result(second, delivered)])).stale).toEqual([]);
  const late = result(first, failed);
  expect((await store.recordAttempts([late])).stale).toEqual([late]);
  const { event, attempts } = await row(first.eventId);
  expect(event).toMatchObject({ status: 'delivered', attempt_count: 1, failures_in_run: 0, lease_token: null });
  expect(attempts.map((a) => a.status_code)).toEqual([200]);
});

it('a late attempt written while the later claim is in flight is left out; the later one stands', async () => {
  const first = await claimedAtIngest();
  const second = await claimedAgainAfterLeaseRanOut(first);
  // The stalled worker's 2xx comes back first: it must not settle the event the other worker holds.
  const late = result(first, delivered);
  expect((await store.recordAttempts([late])).stale).toEqual([late]);
  expect((await row(first.eventId)).event).toMatchObject({ status: 'pending', lease_token: second.leaseToken });
  expect((await store.recordAttempts([result(second, failed)])).stale).toEqual([]);
  const { event, attempts } = await row(first.eventId);
  expect(event).toMatchObject({ status: 'pending', attempt_count: 1, failures_in_run: 1, lease_token: null });
  expect(attempts.map((a) => a.status_code)).toEqual([500]);
});

it('an outcome recorded twice counts once, and a delivered event is never written again', async () => {
  const first = await claimedAtIngest();
  expect((await store.recordAttempts([result(first, delivered)])).stale).toEqual([]);
  expect((await store.recordAttempts([result(first, failed)])).stale).toHaveLength(1);
  const { event, attempts } = await row(first.eventId);
  expect(event).toMatchObject({ status: 'delivered', attempt_count: 1 });
  expect(attempts).toHaveLength(1);
});

it('writes current outcomes and leaves out stale ones in the same batch', async () => {
  const a = await claimedAtIngest();
  const b = await claimedAtIngest();
  const bAgain = await claimedAgainAfterLeaseRanOut(b);
  const staleB = result(b, delivered);
  const { stale } = await store.recordAttempts([result(a, delivered), staleB, result(bAgain, failed)]);
  expect(stale).toEqual([staleB]);
  expect((await row(a.eventId)).event.status).toBe('delivered');
  expect((await row(b.eventId)).event).toMatchObject({ status: 'pending', failures_in_run: 1 });
});

it('a stale worker can neither postpone nor release an event claimed again', async () => {
  const first = await claimedAtIngest();
  const second = await claimedAgainAfterLeaseRanOut(first);
  await store.postpone(first, new Date(Date.now() - 1_000));
  await store.release([first]);
  const { event } = await row(first.eventId);
  expect(event.lease_token).toBe(second.leaseToken);
  expect(event.locked_until!.getTime()).toBeGreaterThan(Date.now());
});
