import { SpanKind, trace } from '@opentelemetry/api';
import type { Kysely } from 'kysely';
import type { Bus } from '@payments/bus';
import type { StreamSpec } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { startInMemoryTelemetry, type InMemoryTelemetry } from '@payments/telemetry/testing';
import { enqueue, OutboxRelay, type OutboxDatabase } from '../src';
import { startOutboxFixture, type OutboxFixture } from './outbox-fixture';

const logger = createLogger('outbox-tracing-test', 'silent');
const spec = {
  name: 'traced_jobs',
  subject: 'traced.jobs',
  consumer: 'traced-jobs-worker',
  duplicateWindowMs: 60_000,
} as const satisfies StreamSpec;
/** This test's stream and its message, as BusRegistry holds the system's. */
type TestRegistry = { requests: Record<string, never>; streams: { 'traced.jobs': { n: number } } };
/** enqueue, with this test's stream typed as the system's streams are. */
const enqueueTest = enqueue<OutboxDatabase, TestRegistry['streams']>;
const tracer = trace.getTracer('outbox-tracing-test');
let telemetry: InMemoryTelemetry;
let fixture: OutboxFixture<TestRegistry>;
let db: Kysely<OutboxDatabase>;
let bus: Bus<TestRegistry>;

beforeAll(async () => {
  telemetry = startInMemoryTelemetry('outbox-tracing-test');
  fixture = await startOutboxFixture<TestRegistry>('outbox-tracing-test', spec);
  ({ db, bus } = fixture);
});
afterAll(async () => {
  await fixture?.stop();
  await telemetry.shutdown();
});

it('stores the enqueuing trace with each row and publishes it with that trace, so the consumer continues it', async () => {
  // Enqueued inside a request's span; the relay runs later, from its own loop, outside any span.
  const request = await tracer.startActiveSpan('request', async (span) => {
    await db.transaction().execute((trx) => enqueueTest(trx, [{ stream: spec, msgId: 'traced', payload: { n: 1 } }]));
    span.end();
    return span.spanContext();
  });
  await enqueueTest(db, [{ stream: spec, msgId: 'untraced', payload: { n: 2 } }]);
  const stored = await db.selectFrom('outbox').select(['msg_id', 'trace_context']).orderBy('id').execute();
  expect(stored).toEqual([
    { msg_id: 'traced', trace_context: { traceparent: `00-${request.traceId}-${request.spanId}-01` } },
    { msg_id: 'untraced', trace_context: null },
  ]);

  const consumed = new Map<number, string | undefined>();
  const consumption = await bus.streams.consumeEach(spec, async ({ n }) => {
    consumed.set(n, trace.getActiveSpan()?.spanContext().traceId);
    return 'done';
  });
  const relay = new OutboxRelay({ db, bus, streams: [spec], logger, pollIntervalMs: 50 });
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
  const unrelated = telemetry
    .spans()
    .find((s) => s.name === 'unrelated')!
    .spanContext().traceId;
  expect(untraced?.parentSpanContext).toBeUndefined();
  expect(consumed.get(2)).toBe(untraced?.spanContext().traceId);
  expect(consumed.get(2)).not.toBe(unrelated);
});
