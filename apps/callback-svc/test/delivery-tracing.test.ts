import { context, SpanKind, SpanStatusCode, trace, type SpanContext } from '@opentelemetry/api';
import { createLogger } from '@payments/logger';
import { toCarrier, type TraceCarrier } from '@payments/telemetry';
import { startInMemoryTelemetry, type InMemoryTelemetry } from '@payments/telemetry/testing';
import type { ClaimedEvent, NewCallbackEvent } from '../src/domain/callback-event';
import { DeliveryEngine } from '../src/domain/delivery-engine';
import type { EventStore } from '../src/domain/event-store';
import type { AttemptOutcome, HttpDelivery } from '../src/domain/http-delivery';
import { otelDeliveryTracing } from '../src/transport/otel-delivery-tracing';

// The delivery engine over a store and an HTTP client that only record what they are given: what is
// under test is which trace each attempt (and the POST inside it) belongs to.
const tracer = trace.getTracer('delivery-tracing-test');
let telemetry: InMemoryTelemetry;
beforeAll(() => {
  telemetry = startInMemoryTelemetry('callback-svc');
});
afterAll(() => telemetry.shutdown());
beforeEach(() => telemetry.reset());

/** Stores nothing: events named in `claim` come back claimed, with the trace context they came with. */
function recordingStore(): EventStore {
  const store = {
    ingest: async (events: NewCallbackEvent[], claim: ReadonlySet<string>): Promise<ClaimedEvent[]> =>
      events
        .filter((e) => claim.has(e.eventId))
        .map((e) => ({
          eventId: e.eventId,
          tenantId: e.tenantId,
          url: e.url,
          targetHost: 'erp.example',
          body: e.body,
          failuresInRun: 0,
          leaseToken: 'lease',
          traceContext: e.traceContext ?? null,
        })),
    claimDue: async (): Promise<ClaimedEvent[]> => [],
    recordAttempts: async () => ({ stale: [] }),
    postpone: async (): Promise<void> => undefined,
    release: async (): Promise<void> => undefined,
  };
  return store as unknown as EventStore;
}

function engineWith(status: number, posts: Array<SpanContext | undefined>, attempts: string[]): DeliveryEngine {
  const outcome: AttemptOutcome = {
    ok: status < 300,
    statusCode: status,
    error: status < 300 ? null : `HTTP ${status}`,
    durationMs: 1,
    responseExcerpt: null,
    retryAfterMs: null,
    refused: false,
  };
  const http: HttpDelivery = {
    post: async () => {
      posts.push(trace.getActiveSpan()?.spanContext());
      return outcome;
    },
    close: async () => undefined,
  };
  return new DeliveryEngine({
    store: recordingStore(),
    workers: {
      register: async () => undefined,
      renew: async () => true,
      retire: async () => undefined,
      reapLapsed: async () => ({ workers: 0, events: 0 }),
    },
    http,
    secrets: { secretsFor: async () => ['whsec_dGVzdA=='] },
    retry: { scheduleMs: [1000], jitterPercent: 0 },
    limits: {
      concurrency: 4,
      hostConcurrency: 4,
      maxHeld: 100,
      maxHeldPerHost: 100,
      leaseMs: 30_000,
      timeoutMs: 1_000,
      pollIntervalMs: 60_000,
    },
    logger: createLogger('delivery-tracing-test', 'silent'),
    onAttempt: (event) => attempts.push(event.eventId),
    tracing: otelDeliveryTracing,
  });
}

const event = (eventId: string, traceContext?: TraceCarrier): NewCallbackEvent => ({
  eventId,
  tenantId: 't',
  eventType: 'receivable.registered',
  url: 'http://erp.example/cb',
  body: '{}',
  traceContext,
});

async function until(check: () => boolean): Promise<void> {
  const end = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

it('runs an attempt as a child of the stored callback request context, with the POST inside it', async () => {
  const posts: Array<SpanContext | undefined> = [];
  const attempts: string[] = [];
  const engine = engineWith(200, posts, attempts);
  await engine.start();
  const producer = tracer.startSpan('process callback_requests');
  const carrier = toCarrier(trace.setSpan(context.active(), producer));
  producer.end();
  await engine.accept([event('e1', carrier)]);
  await until(() => attempts.length === 1);
  await engine.stop();

  const delivery = telemetry.spans().find((s) => s.name === 'deliver callback');
  expect(delivery).toMatchObject({
    kind: SpanKind.INTERNAL,
    attributes: { 'callback.event_id': 'e1', 'callback.status': 'delivered', 'http.response.status_code': 200 },
  });
  expect(delivery?.spanContext().traceId).toBe(producer.spanContext().traceId);
  expect(delivery?.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
  expect(posts[0]?.spanId).toBe(delivery?.spanContext().spanId);
});

it('starts a trace of its own for an event stored without context, not the one that happened to wake it', async () => {
  const posts: Array<SpanContext | undefined> = [];
  const attempts: string[] = [];
  const engine = engineWith(503, posts, attempts);
  await engine.start();
  const batchTrace = await tracer.startActiveSpan('process callback_requests batch', async (span) => {
    await engine.accept([event('e2')]);
    span.end();
    return span.spanContext().traceId;
  });
  await until(() => attempts.length === 1);
  await engine.stop();

  const delivery = telemetry.spans().find((s) => s.name === 'deliver callback');
  expect(delivery?.parentSpanContext).toBeUndefined();
  expect(delivery?.spanContext().traceId).not.toBe(batchTrace);
  expect(delivery).toMatchObject({
    status: { code: SpanStatusCode.ERROR, message: 'HTTP 503' },
    attributes: { 'callback.status': 'pending', 'http.response.status_code': 503 },
  });
  expect(posts[0]?.spanId).toBe(delivery?.spanContext().spanId);
});
