import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import { MAX_RESPONSE_EXCERPT, ServiceError, Subjects } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import { DeliveryStatsStore } from '../src/db/delivery-stats-store';
import { migrations, SCHEMA } from '../src/db/migrations';
import type { CallbacksDatabase } from '../src/db/schema';
import { payloadOf } from '../src/domain/callback-event';
import { EventStore } from '../src/domain/event-store';
import { storableExcerpt, type HttpDelivery } from '../src/domain/http-delivery';
import { registerHandlers } from '../src/transport/handlers';
import { createHttpDelivery } from '../src/transport/undici-http-delivery';

// An event's detail (callbacks.get) shows its payload, the stored body parsed, and each
// attempt's excerpt of the receiver's answer; the list does not. Against a real Postgres, NATS and an
// HTTP receiver, through the handlers the gateway asks.

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

let test: { url: string; drop: () => Promise<void> };
let db: Kysely<CallbacksDatabase>;
let store: EventStore;
let bus: Bus;
let handlers: ReturnType<typeof registerHandlers>;
let delivery: HttpDelivery;
let receiver: Server;
/** The receiver's answers by path: status and body bytes. */
const answers = new Map<string, { status: number; body: Buffer }>();
let receiverUrl: string;

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
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = answers.get(req.url ?? '') ?? { status: 404, body: Buffer.alloc(0) };
      res.writeHead(answer.status, { 'content-type': 'text/html' });
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  delivery = createHttpDelivery({ timeoutMs: 2_000, policy: 'allow-private' });
});
afterAll(async () => {
  await delivery?.close();
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
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

/** One real attempt at the receiver's `path` (answering `status` with `body`), recorded as the engine does. */
async function attempted(tenantId: string, path: string, status: number, body: Buffer): Promise<string> {
  answers.set(path, { status, body });
  const eventId = `evt_${randomUUID().replace(/-/g, '')}`;
  const url = `${receiverUrl}${path}`;
  const [event] = await store.ingest(
    [{ eventId, tenantId, eventType: 'receivable.registered', url, body: '{}' }],
    new Set([eventId]),
    60_000,
  );
  const outcome = await delivery.post(url, '{}', {});
  const { stale } = await store.recordAttempts([{ event: event!, attemptedAt: new Date(), outcome, retryAt: null }]);
  expect(stale).toEqual([]);
  return eventId;
}

describe("an attempt's response_excerpt", () => {
  it("answers what a failing receiver said, as text, with the attempt's status code and error", async () => {
    const tenant = randomUUID();
    const said = '<img src=x onerror=alert(1)> database is down';
    const eventId = await attempted(tenant, '/fails', 500, Buffer.from(said));
    const view = await get(tenant, eventId);
    expect(view.status).toBe('dead');
    expect(view.attempts).toEqual([
      {
        attempted_at: expect.any(String),
        status_code: 500,
        error: 'HTTP 500',
        duration_ms: expect.any(Number),
        response_excerpt: said,
      },
    ]);
    // Another tenant asking for it: not_found, the excerpt with it.
    await expect(get(randomUUID(), eventId)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('stores an answer holding NUL and bytes that are not UTF-8 (Postgres text refuses U+0000), cut at 1,024', async () => {
    const tenant = randomUUID();
    const hostile = Buffer.concat([Buffer.from('a\u0000b'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.alloc(4096, 0)]);
    const eventId = await attempted(tenant, '/binary', 502, hostile);
    const [attempt] = (await get(tenant, eventId)).attempts;
    expect(attempt?.status_code).toBe(502);
    const excerpt = attempt?.response_excerpt ?? '';
    expect(excerpt.startsWith('a\uFFFDb\uFFFD\uFFFD')).toBe(true);
    expect(excerpt).not.toContain('\u0000');
    expect(excerpt).toHaveLength(MAX_RESPONSE_EXCERPT);
  });

  it('is null when the receiver answered nothing', async () => {
    const tenant = randomUUID();
    const eventId = await attempted(tenant, '/empty', 503, Buffer.alloc(0));
    expect((await get(tenant, eventId)).attempts.map((a) => a.response_excerpt)).toEqual([null]);
  });
});

describe('storableExcerpt', () => {
  it('keeps text as it is, replaces NUL, answers null for nothing', () => {
    expect(storableExcerpt('{"error":"x"} <b>')).toBe('{"error":"x"} <b>');
    expect(storableExcerpt('a\u0000\u0000b')).toBe('a\uFFFD\uFFFDb');
    expect(storableExcerpt('')).toBeNull();
    expect(storableExcerpt(null)).toBeNull();
  });

  it('cuts at MAX_RESPONSE_EXCERPT characters, never between the halves of a surrogate pair', () => {
    expect(storableExcerpt('x'.repeat(5000))).toBe('x'.repeat(MAX_RESPONSE_EXCERPT));
    const cut = storableExcerpt(`${'x'.repeat(MAX_RESPONSE_EXCERPT - 1)}😀`) ?? '';
    expect(cut).toBe('x'.repeat(MAX_RESPONSE_EXCERPT - 1));
  });
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
