import { randomBytes } from 'node:crypto';
import { SpanKind, trace } from '@opentelemetry/api';
import type { Kysely } from 'kysely';
import { connectBus, type Bus } from '@payments/bus';
import type { StreamSpec } from '@payments/contracts';
import { createDatabase, createTestDatabase, migrateToLatest } from '@payments/db';
import { createLogger } from '@payments/logger';
import { startInMemoryTelemetry, type InMemoryTelemetry } from '@payments/telemetry/testing';
import { enqueue, outboxMigration, outboxTraceContextMigration, OutboxRelay, type OutboxDatabase } from '../src';

const logger = createLogger('outbox-tracing-test', 'silent');
const spec: StreamSpec = { name: 'traced_jobs', subject: 'traced.jobs', consumer: 'traced-jobs-worker', duplicateWindowMs: 60_000 };
const tracer = trace.getTracer('outbox-tracing-test');
let telemetry: InMemoryTelemetry;
let db: Kysely<OutboxDatabase>;
let drop: () => Promise<void>;
let bus: Bus;

beforeAll(async () => {
  telemetry = startInMemoryTelemetry('outbox-tracing-test');
  const test = await createTestDatabase();
  drop = test.drop;
  db = createDatabase<OutboxDatabase>({ url: test.url, schema: 'svc' });
  await migrateToLatest(db, 'svc', { '0001_outbox': outboxMigration, '0002_outbox_trace_context': outboxTraceContextMigration });
  bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix: `t${randomBytes(4).toString('hex')}`, name: 'outbox-tracing-test', logger });
  await bus.streams.ensure(spec);
});
afterAll(async () => {
  const jsm = await bus.connection.jetstreamManager();
  await jsm.streams.delete(bus.streams.streamName(spec)).catch(() => undefined);
  await bus.close();
  await db.destroy();
  await drop();
  await telemetry.shutdown();
});

it('stores the enqueuing trace with each row and publishes it with that trace, so the consumer continues it', async () => {
  // Enqueued inside a request's span; the relay runs later, from its own loop, outside any span.
  const request = await tracer.startActiveSpan('request', async (span) => {
    await db.transaction().execute((trx) => enqueue(trx, [{ stream: spec, msgId: 'traced', payload: { n: 1 } }]));
    span.end();
    return span.spanContext();
  });
  await enqueue(db, [{ stream: spec, msgId: 'untraced', payload: { n: 2 } }]);
  const stored = await db.selectFrom('outbox').select(['msg_id', 'trace_context']).orderBy('id').execute();
  expect(stored).toEqual([
    { msg_id: 'traced', trace_context: { traceparent: `00-${request.traceId}-${request.spanId}-01` } },
    { msg_id: 'untraced', trace_context: null },
  ]);

  const consumed = new Map<number, string | undefined>();
  const consumption = await bus.streams.consumeEach<{ n: number }>(spec, async ({ n }) => {
    consumed.set(n, trace.getActiveSpan()?.spanContext().traceId);
    return 'done';
  });
  const relay = new OutboxRelay(db, bus, [spec], logger, { pollIntervalMs: 50 });
  // Woken from inside another trace (as after a commit in a request handler): that trace must not adopt it.
  await tracer.startActiveSpan('unrelated', async (span) => {
    relay.start();
    span.end();
  });
  try {
    const end = Date.now() + 5000;
    while (consumed.size < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  } finally {
    await relay.stop();
    await consumption.stop();
  }

  expect(consumed.get(1)).toBe(request.traceId);
  const publishes = telemetry.spans().filter((s) => s.name === 'publish traced_jobs');
  const traced = publishes.find((s) => s.attributes['messaging.message.id'] === 'traced');
  const untraced = publishes.find((s) => s.attributes['messaging.message.id'] === 'untraced');
  expect(traced).toMatchObject({ kind: SpanKind.PRODUCER, parentSpanContext: { spanId: request.spanId } });
  // A row enqueued outside any trace starts its own at publish, not the waking request's.
  const unrelated = telemetry.spans().find((s) => s.name === 'unrelated')!.spanContext().traceId;
  expect(untraced?.parentSpanContext).toBeUndefined();
  expect(consumed.get(2)).toBe(untraced?.spanContext().traceId);
  expect(consumed.get(2)).not.toBe(unrelated);
});
