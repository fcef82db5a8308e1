import { context, propagation, trace } from '@opentelemetry/api';
import {
  activeTraceIds,
  detached,
  extractFromHeaders,
  fromCarrier,
  injectIntoHeaders,
  toCarrier,
  type HeaderReader,
  type HeaderWriter,
} from '../src';
import { startInMemoryTelemetry, type InMemoryTelemetry } from '../src/testing';

/** Stands in for NATS MsgHdrs: `get` answers '' for a missing key, as MsgHdrs does. */
class FakeHeaders implements HeaderReader, HeaderWriter {
  private readonly values = new Map<string, string>();
  set(key: string, value: string): void {
    this.values.set(key, value);
  }
  get(key: string): string {
    return this.values.get(key) ?? '';
  }
  keys(): string[] {
    return [...this.values.keys()];
  }
}

const tracer = trace.getTracer('telemetry-test');
let telemetry: InMemoryTelemetry;

beforeAll(() => {
  telemetry = startInMemoryTelemetry('telemetry-test');
});
afterAll(async () => {
  await telemetry.shutdown();
});

it('round-trips the active span through a string record (as stored in Postgres)', () => {
  const { carrier, traceId, spanId } = tracer.startActiveSpan('enqueue', (span) => {
    const result = { carrier: toCarrier(), traceId: span.spanContext().traceId, spanId: span.spanContext().spanId };
    span.end();
    return result;
  });
  expect(carrier?.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  // Stored as JSON and read back.
  const restored = trace.getSpanContext(fromCarrier(JSON.parse(JSON.stringify(carrier))));
  expect(restored).toMatchObject({ traceId, spanId, isRemote: true });
});

it('carries nothing outside a span, and a missing carrier restores no parent', () => {
  expect(toCarrier()).toBeUndefined();
  expect(trace.getSpanContext(fromCarrier(null))).toBeUndefined();
  expect(trace.getSpanContext(fromCarrier(undefined))).toBeUndefined();
});

it('does not take the active context as parent for stored work without a carrier', () => {
  tracer.startActiveSpan('poller', (span) => {
    expect(trace.getSpanContext(fromCarrier(null))).toBeUndefined();
    span.end();
  });
});

it('injects into and extracts from message headers, keeping baggage too', () => {
  const headers = new FakeHeaders();
  const span = tracer.startSpan('send');
  const withBaggage = propagation.setBaggage(
    trace.setSpan(context.active(), span),
    propagation.createBaggage({ tenant: { value: 't1' } }),
  );
  injectIntoHeaders(headers, withBaggage);
  span.end();
  expect(headers.keys().sort()).toEqual(['baggage', 'traceparent']);
  const extracted = extractFromHeaders(headers);
  expect(trace.getSpanContext(extracted)).toMatchObject({
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
  });
  expect(propagation.getBaggage(extracted)?.getEntry('tenant')?.value).toBe('t1');
});

it('extracts no parent from a message without trace headers', () => {
  expect(trace.getSpanContext(extractFromHeaders(new FakeHeaders()))).toBeUndefined();
  expect(trace.getSpanContext(extractFromHeaders(undefined))).toBeUndefined();
});

it('names the active trace and span for log lines, and nothing outside a span', () => {
  expect(activeTraceIds()).toEqual({});
  tracer.startActiveSpan('work', (span) => {
    expect(activeTraceIds()).toEqual({ trace_id: span.spanContext().traceId, span_id: span.spanContext().spanId });
    span.end();
  });
});

it('runs detached work outside the caller trace', async () => {
  const ids = await tracer.startActiveSpan('request', async (span) => {
    const inside = activeTraceIds();
    const loop = await detached(async () => {
      await new Promise((r) => setTimeout(r, 5));
      return activeTraceIds();
    });
    span.end();
    return { inside, loop };
  });
  expect(ids.inside.trace_id).toBeDefined();
  expect(ids.loop).toEqual({});
});

it('gives every span the service name', () => {
  telemetry.reset();
  tracer.startSpan('named').end();
  expect(telemetry.spans()[0].resource.attributes['service.name']).toBe('telemetry-test');
});
