import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import { ServiceError, Subjects } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import { DeliveryStatsStore } from '../src/db/delivery-stats-store';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { CallbacksDatabase } from '../src/db/schema';
import { payloadOf } from '../src/domain/callback-event';
import { EventStore } from '../src/domain/event-store';
import { registerHandlers } from '../src/transport/handlers';

// Issue 19: an event's detail (callbacks.get) shows its payload, the stored body parsed; the list does
// not. Against a real Postgres and NATS, through the handlers the gateway asks.

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

let test: { url: string; drop: () => Promise<void> };
let db: Kysely<CallbacksDatabase>;
let store: EventStore;
let bus: Bus;
let handlers: ReturnType<typeof registerHandlers>;

beforeAll(async () => {
  test = await createTestDatabase();
  db = createDatabase<CallbacksDatabase>({ url: test.url, schema: SCHEMA, poolSize: 2 });
  await migrateToLatest(db, SCHEMA, migrations);
  store = new EventStore(db);
  const prefix = `t${randomBytes(5).toString('hex')}`;
  bus = await connectBus({
    url: NATS_URL,
    prefix,
    name: 'callback-detail-test',
    logger: createLogger('test', 'silent'),
    timeoutMs: 5_000,
  });
  handlers = registerHandlers(bus, { store, stats: new DeliveryStatsStore(db), onRetry: () => undefined });
  await bus.connection.flush();
});
afterAll(async () => {
  for (const h of handlers ?? []) h.unsubscribe();
  await bus?.close();
  await db?.destroy();
  await test?.drop();
});

/** Stores one event with this exact body (as ingest does for a producer's request) and answers its id. */
async function stored(tenantId: string, body: string, eventType = 'booklet.sent'): Promise<string> {
  const eventId = `evt_${randomUUID().replace(/-/g, '')}`;
  await store.ingest([{ eventId, tenantId, eventType, url: 'http://erp.test/callbacks', body }], new Set(), 60_000);
  return eventId;
}

const get = (tenantId: string, eventId: string) =>
  bus.request(Subjects.callbacks.get, { tenant_id: tenantId, event_id: eventId }, { service: 'callbacks' });

it("answers the event's payload in its detail, and not in the list items", async () => {
  const tenant = randomUUID();
  const payload = {
    success: true,
    type: 'sent',
    payment_slip_id: randomUUID(),
    download: 'http://127.0.0.1:3000/api/v1/bank-slip-booklet/downloads/b1?expires=1&signature=abc',
    installments: 3,
  };
  const eventId = await stored(tenant, JSON.stringify(payload));
  const view = await get(tenant, eventId);
  expect(view).toMatchObject({ event_id: eventId, event_type: 'booklet.sent', status: 'pending', attempts: [] });
  expect(view.payload).toEqual(payload);

  const page = await bus.request(Subjects.callbacks.list, { tenant_id: tenant, limit: 10 }, { service: 'callbacks' });
  expect(page.items.map((i) => i.event_id)).toEqual([eventId]);
  expect(page.items[0]).not.toHaveProperty('payload');
  expect(JSON.stringify(page)).not.toContain('signature=abc');
});

it("keeps another tenant's event and its payload out: not_found", async () => {
  const eventId = await stored(randomUUID(), JSON.stringify({ success: true, type: 'sent', download: 'x' }));
  const err = await get(randomUUID(), eventId).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceError);
  expect((err as ServiceError).code).toBe('not_found');
});

it('answers a null payload for a stored body that is not a JSON object', async () => {
  const tenant = randomUUID();
  for (const body of ['not json', '[1,2]', '"text"', 'null'])
    expect({ body, payload: (await get(tenant, await stored(tenant, body))).payload }).toEqual({ body, payload: null });
});

describe('payloadOf', () => {
  it('parses an object, keeping key order and nested values', () => {
    expect(payloadOf('{"b":1,"a":{"c":[true,null]}}')).toEqual({ b: 1, a: { c: [true, null] } });
    expect(Object.keys(payloadOf('{"b":1,"a":2}') ?? {})).toEqual(['b', 'a']);
  });

  it('answers null for anything else', () => {
    for (const body of ['', '{', 'not json', '[]', '1', '"x"', 'null', 'true']) expect(payloadOf(body)).toBeNull();
  });
});
