import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { createDatabase, ensureDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import { PrivatePostgres } from '@payments/test-support/private-postgres';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { CallbacksDatabase } from '../src/db/schema';
import type { NewCallbackEvent } from '../src/domain/callback-event';
import { DeliveryEngine, type DeliveryLimits, type SigningSecrets } from '../src/domain/delivery-engine';
import { EventStore } from '../src/domain/event-store';
import type { AttemptOutcome, HttpDelivery } from '../src/domain/http-delivery';
import { WorkerRegistry } from '../src/domain/worker-registry';

// Postgres goes away while deliveries are in flight (a chaos run restarts it under load): the
// bookkeeping of those deliveries fails (recording the attempt, or giving the claim back when the
// tenant's secret cannot be read because the gateway's database is down too). Once Postgres answers
// again, every event must be delivered and recorded within seconds, not when its row lease
// (CALLBACK_TIMEOUT_MS + 50 s) ends; and none twice, since no claim changes hands in a short outage.
// A private Postgres: the shared one on 5432 serves other test files and must never go down.

let postgres: PrivatePostgres;
let db: Kysely<CallbacksDatabase>;
/** The "gateway's" database: the same server, read for each signing secret. */
let gatewayDb: Kysely<unknown>;
const engines: DeliveryEngine[] = [];

beforeAll(async () => {
  postgres = await PrivatePostgres.create();
  const url = postgres.url('callbacks');
  await ensureDatabase(url);
  db = createDatabase<CallbacksDatabase>({ url, schema: SCHEMA, poolSize: 6 });
  await migrateToLatest(db, SCHEMA, migrations);
  gatewayDb = createDatabase<unknown>({ url, schema: 'public', poolSize: 32 });
}, 60_000);
afterAll(async () => {
  await db?.destroy();
  await gatewayDb?.destroy();
  await postgres?.destroy();
}, 60_000);
beforeEach(async () => {
  await sql`truncate attempts, events, event_log, event_keys, workers`.execute(db);
});
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
}, 30_000);

const silent = createLogger('postgres-restart-test', (process.env.TEST_LOG_LEVEL ?? 'silent') as 'silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Every event's row lease: CALLBACK_TIMEOUT_MS plus the engine's 50 s. */
const TIMEOUT_MS = 5_000;
const ROW_LEASE_S = TIMEOUT_MS / 1000 + 50;
/** Once Postgres answers again, all must be recorded within this (far less than the row lease). */
const RECOVERY_BOUND_MS = 5_000;

const delivered: AttemptOutcome = {
  ok: true,
  statusCode: 200,
  error: null,
  durationMs: 1,
  responseExcerpt: null,
  retryAfterMs: null,
  refused: false,
};

/** An ERP answering 200 after `delayMs`; counts each POST by webhook-id. */
function receiver(delayMs: number): HttpDelivery & { posts: Map<string, number>; total: () => number } {
  const posts = new Map<string, number>();
  return {
    posts,
    total: () => [...posts.values()].reduce((a, b) => a + b, 0),
    post: async (_url, _body, headers) => {
      await sleep(delayMs);
      const id = headers['webhook-id'];
      posts.set(id, (posts.get(id) ?? 0) + 1);
      return { ...delivered, durationMs: delayMs };
    },
    close: async () => undefined,
  };
}

/**
 * Signing secrets read from Postgres at each attempt, as the gateway reads them from its database; the
 * read takes a while (a request to the gateway), so a restart cuts some off.
 */
const secretsFromPostgres: SigningSecrets = {
  secretsFor: async () => {
    await sql`select pg_sleep(0.05)`.execute(gatewayDb);
    return ['whsec_' + Buffer.from('restart-test-secret-0123456789').toString('base64')];
  },
};
const secretsAlwaysThere: SigningSecrets = {
  secretsFor: async () => ['whsec_' + Buffer.from('restart-test-secret-0123456789').toString('base64')],
};

function engine(http: HttpDelivery, secrets: SigningSecrets, limits: Partial<DeliveryLimits>): DeliveryEngine {
  const e = new DeliveryEngine({
    store: new EventStore(db),
    workers: new WorkerRegistry(db),
    http,
    secrets,
    retry: { scheduleMs: [500, 500, 500], jitterPercent: 0 },
    limits: {
      concurrency: 32,
      hostConcurrency: 32,
      maxHeld: 5_000,
      maxHeldPerHost: 5_000,
      leaseMs: 10_000,
      timeoutMs: TIMEOUT_MS,
      pollIntervalMs: 200,
      ...limits,
    },
    logger: silent,
  });
  engines.push(e);
  return e;
}

function newEvents(n: number): NewCallbackEvent[] {
  return Array.from({ length: n }, () => ({
    eventId: `evt_${randomUUID().replace(/-/g, '')}`,
    tenantId: randomUUID(),
    eventType: 'receivable.registered',
    url: 'http://erp.test/callbacks',
    body: '{"ok":true}',
  }));
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * Seconds from `since` until every event is recorded delivered (polled every 100 ms); waits up to the
 * row lease and a margin, so that a failure shows how long recovery really took.
 */
async function secondsUntilAllRecorded(n: number, since: number): Promise<number> {
  const end = since + (ROW_LEASE_S + 10) * 1000;
  for (;;) {
    // Delivered events leave the queue; the log has them all (migration 0009).
    const row = await db
      .selectFrom('event_log')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('status', '=', 'delivered')
      .executeTakeFirstOrThrow()
      .catch(() => ({ n: '0' }));
    if (Number(row.n) >= n || Date.now() > end) return (Date.now() - since) / 1000;
    await sleep(100);
  }
}

async function attemptsRecorded(): Promise<{ events: number; attempts: number }> {
  const [row] = (
    await sql<{ events: string; attempts: string }>`
      select (select count(*) from event_log) as events, (select count(*) from attempts) as attempts`.execute(db)
  ).rows;
  return { events: Number(row.events), attempts: Number(row.attempts) };
}

it('delivers and records every event within seconds of a Postgres restart, each once', async () => {
  const total = 600;
  const http = receiver(50);
  const e = engine(http, secretsFromPostgres, {});
  await e.start();
  await e.accept(newEvents(total));
  await until('deliveries under way', () => http.total() >= 100, 10_000);
  // Mid-load: deliveries in flight (their attempts cannot be recorded) and starting (their secret
  // cannot be read, and their claim cannot be given back).
  await postgres.stop();
  await sleep(1_000);
  await postgres.start();
  const answeringAt = Date.now();
  const took = await secondsUntilAllRecorded(total, answeringAt);
  console.log(`postgres-restart: all ${total} recorded delivered ${took.toFixed(1)} s after Postgres answered again`);
  expect(took * 1000).toBeLessThan(RECOVERY_BOUND_MS);
  expect(http.posts.size).toBe(total);
  expect([...http.posts.values()].filter((n) => n > 1)).toEqual([]);
  expect(await attemptsRecorded()).toEqual({ events: total, attempts: total });
}, 120_000);

it('records attempts held through an outage longer than a few retries, within seconds of Postgres answering', async () => {
  const total = 200;
  const http = receiver(50);
  // The worker's lease outlives the outage, so nothing but the row lease could free a forgotten claim.
  const e = engine(http, secretsAlwaysThere, { leaseMs: 60_000 });
  await e.start();
  await e.accept(newEvents(total));
  await until('deliveries under way', () => http.total() >= 32, 10_000);
  await postgres.stop();
  await sleep(15_000);
  await postgres.start();
  const answeringAt = Date.now();
  const took = await secondsUntilAllRecorded(total, answeringAt);
  console.log(
    `postgres-restart: 15 s outage, all ${total} recorded delivered ${took.toFixed(1)} s after Postgres answered again`,
  );
  expect(took * 1000).toBeLessThan(RECOVERY_BOUND_MS);
  expect([...http.posts.values()].filter((n) => n > 1)).toEqual([]);
  expect(await attemptsRecorded()).toEqual({ events: total, attempts: total });
}, 150_000);

it("records every event within seconds when the outage outlasts the worker's lease (claims change hands)", async () => {
  const total = 200;
  const http = receiver(50);
  // The lease lapses during the outage: the worker drops what waits, claims under a new identity, and its
  // old claims are reaped. Attempts held unrecorded meanwhile are fenced off if their claim was reaped
  // first (the event is sent again: at least once), written if not.
  const e = engine(http, secretsFromPostgres, { leaseMs: 4_000 });
  await e.start();
  await e.accept(newEvents(total));
  await until('deliveries under way', () => http.total() >= 32, 10_000);
  await postgres.stop();
  await sleep(8_000);
  await postgres.start();
  const answeringAt = Date.now();
  const took = await secondsUntilAllRecorded(total, answeringAt);
  const resent = http.total() - http.posts.size;
  console.log(
    `postgres-restart: 8 s outage, 4 s worker lease: all ${total} recorded delivered ${took.toFixed(1)} s after ` +
      `Postgres answered again, ${resent} sent again`,
  );
  expect(took * 1000).toBeLessThan(RECOVERY_BOUND_MS);
  expect(http.posts.size).toBe(total);
  const { events, attempts } = await attemptsRecorded();
  expect(events).toBe(total);
  expect(attempts).toBeGreaterThanOrEqual(total);
}, 120_000);

it('stops within a few seconds while Postgres is away, its unrecorded claims left to the worker lease', async () => {
  const total = 100;
  const http = receiver(200);
  const e = engine(http, secretsAlwaysThere, {});
  await e.start();
  await e.accept(newEvents(total));
  await until('deliveries under way', () => http.total() >= 16, 10_000);
  await postgres.stop();
  try {
    await sleep(500);
    const stopping = Date.now();
    await e.stop();
    const took = (Date.now() - stopping) / 1000;
    console.log(`postgres-restart: stopped ${took.toFixed(1)} s after it was asked to, Postgres away`);
    expect(took).toBeLessThan(10);
  } finally {
    await postgres.start();
  }
}, 60_000);
