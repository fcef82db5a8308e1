import { randomBytes } from 'node:crypto';
import { SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import { ServiceError, type Exchange, type StreamSpec } from '@payments/contracts';
import { createLogger } from '@payments/logger';
import { toCarrier, fromCarrier } from '@payments/telemetry';
import { startInMemoryTelemetry, type InMemoryTelemetry, type ReadableSpan } from '@payments/telemetry/testing';
import { connectBus, type Bus } from '../src';
import { testClaimStores, type TestClaimStores } from './claim-stores';

const logger = createLogger('bus-tracing-test', 'silent');
const prefix = `t${randomBytes(4).toString('hex')}`;
const each = {
  name: 'traced_each',
  subject: 'traced.each',
  consumer: 'traced-each',
  duplicateWindowMs: 60_000,
} as const satisfies StreamSpec;
const batch = {
  name: 'traced_batch',
  subject: 'traced.batch',
  consumer: 'traced-batch',
  duplicateWindowMs: 60_000,
} as const satisfies StreamSpec;
/** This test's subjects, streams and their types, as BusRegistry holds the system's. */
type TestRegistry = {
  requests: {
    echo: Exchange<{ text: string }, { text: string; traceId?: string }>;
    missing: Exchange<object, never>;
    crash: Exchange<object, never>;
    'nobody.home': Exchange<object, never>;
  };
  streams: { 'traced.each': { id: string }; 'traced.batch': { id: string } };
};
const tracer = trace.getTracer('bus-tracing-test');
let telemetry: InMemoryTelemetry;
let server: Bus<TestRegistry>;
let client: Bus<TestRegistry>;
// A large body goes to its recipient's claim store: the server's for a request, the client's for a reply.
let claims: TestClaimStores<keyof TestRegistry['requests']>;

beforeAll(async () => {
  telemetry = startInMemoryTelemetry('bus-tracing-test');
  const servers = { echo: 'server', missing: 'server', crash: 'server', 'nobody.home': 'nobody' };
  claims = await testClaimStores('nats://127.0.0.1:4222', prefix, servers, ['client']);
  server = await connectBus<TestRegistry>({
    url: 'nats://127.0.0.1:4222',
    prefix,
    name: 'server',
    logger,
    claimCheckThreshold: 2048,
    claimRouting: claims.routing,
  });
  client = await connectBus<TestRegistry>({
    url: 'nats://127.0.0.1:4222',
    prefix,
    name: 'client',
    logger,
    claimCheckThreshold: 2048,
    claimRouting: claims.routing,
    timeoutMs: 2000,
  });
  server.serve('echo', async ({ text }) => ({ text, traceId: trace.getActiveSpan()?.spanContext().traceId }), {
    queue: 'echo',
  });
  server.serve(
    'missing',
    async () => {
      throw new ServiceError('not_found', 'no such thing');
    },
    { queue: 'missing' },
  );
  server.serve(
    'crash',
    async () => {
      throw new Error('boom');
    },
    { queue: 'crash' },
  );
  for (const spec of [each, batch]) await server.streams.provision(spec);
});
afterAll(async () => {
  const jsm = await server.connection.jetstreamManager();
  for (const spec of [each, batch]) await jsm.streams.delete(server.streams.streamName(spec)).catch(() => undefined);
  await client?.close();
  await server?.close();
  await claims?.remove();
  await telemetry.shutdown();
});
beforeEach(() => telemetry.reset());

const until = async (check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** Runs `fn` in a new root span and returns its trace id with the result. */
async function inRootSpan<T>(fn: () => Promise<T>): Promise<{ traceId: string; spanId: string; result: T }> {
  return tracer.startActiveSpan('caller', async (span) => {
    try {
      return { traceId: span.spanContext().traceId, spanId: span.spanContext().spanId, result: await fn() };
    } finally {
      span.end();
    }
  });
}

const named = (name: string) => (): ReadableSpan | undefined => telemetry.spans().find((s) => s.name === name);
const parentOf = (span: ReadableSpan | undefined) => span?.parentSpanContext?.spanId;

it('keeps a request and its serving in the caller trace: CLIENT span -> SERVER span', async () => {
  const { traceId, spanId, result } = await inRootSpan(() => client.request('echo', { text: 'hi' }));
  expect(result.traceId).toBe(traceId); // the handler ran inside the server span
  await until(() => Boolean(named('process echo')()));
  const sent = named('request echo')();
  const served = named('process echo')();
  expect(sent).toMatchObject({ kind: SpanKind.CLIENT });
  expect(sent?.spanContext().traceId).toBe(traceId);
  expect(parentOf(sent)).toBe(spanId);
  expect(served).toMatchObject({ kind: SpanKind.SERVER });
  expect(served?.spanContext().traceId).toBe(traceId);
  expect(parentOf(served)).toBe(sent?.spanContext().spanId);
  expect(sent?.attributes).toMatchObject({
    'messaging.system': 'nats',
    'messaging.destination.name': `${prefix}.echo`,
    'messaging.operation.type': 'send',
  });
  expect(served?.attributes).toMatchObject({
    'messaging.system': 'nats',
    'messaging.destination.name': `${prefix}.echo`,
    'messaging.consumer.group.name': 'echo',
  });
});

it('keeps the trace across a claim-checked (large) request', async () => {
  const text = 'x'.repeat(10_000); // over the 2 KiB threshold of this test's bus
  const { traceId, result } = await inRootSpan(() => client.request('echo', { text }));
  expect(result).toEqual({ text, traceId });
});

it('marks a failed request: the caller error on the CLIENT span, a crash on both', async () => {
  await expect(client.request('missing', {})).rejects.toMatchObject({ code: 'not_found' });
  await expect(client.request('crash', {})).rejects.toMatchObject({ code: 'internal_error' });
  await until(() => Boolean(named('process crash')() && named('process missing')()));
  expect(named('request missing')()).toMatchObject({
    status: { code: SpanStatusCode.ERROR },
    attributes: { 'error.type': 'not_found' },
  });
  expect(named('process missing')()).toMatchObject({
    status: { code: SpanStatusCode.UNSET },
    attributes: { 'error.type': 'not_found' },
  });
  expect(named('request crash')()?.status.code).toBe(SpanStatusCode.ERROR);
  expect(named('process crash')()).toMatchObject({ status: { code: SpanStatusCode.ERROR, message: 'boom' } });
});

it('marks a request nobody serves as failed', async () => {
  await expect(client.request('nobody.home', {})).rejects.toMatchObject({ code: 'service_unavailable' });
  expect(named('request nobody.home')()).toMatchObject({
    status: { code: SpanStatusCode.ERROR },
    attributes: { 'error.type': 'service_unavailable' },
  });
});

it('keeps a published message and its consumption in one trace: PRODUCER -> CONSUMER, handler inside', async () => {
  const seen: Array<{ id: string; traceId?: string }> = [];
  const consumption = await server.streams.consumeEach(each, async ({ id }) => {
    seen.push({ id, traceId: trace.getActiveSpan()?.spanContext().traceId });
    return 'done';
  });
  try {
    const { traceId } = await inRootSpan(() => client.streams.publish(each, { id: 'one' }, 'one'));
    await until(() => seen.length === 1 && Boolean(named('process traced_each')()));
    expect(seen).toEqual([{ id: 'one', traceId }]);
    const published = named('publish traced_each')();
    const consumed = named('process traced_each')();
    expect(published).toMatchObject({
      kind: SpanKind.PRODUCER,
      attributes: { 'messaging.message.id': 'one', 'messaging.nats.stream': `${prefix}_traced_each` },
    });
    expect(published?.spanContext().traceId).toBe(traceId);
    expect(consumed).toMatchObject({
      kind: SpanKind.CONSUMER,
      attributes: { 'messaging.message.id': 'one', 'messaging.consumer.group.name': 'traced-each' },
    });
    expect(consumed?.spanContext().traceId).toBe(traceId);
    expect(parentOf(consumed)).toBe(published?.spanContext().spanId);
  } finally {
    await consumption.stop();
  }
});

it('publishes with a stored context as parent (the outbox relay path), not the active one', async () => {
  const stored = await inRootSpan(async () => toCarrier());
  const seen: string[] = [];
  const consumption = await server.streams.consumeEach(each, async () => {
    seen.push(trace.getActiveSpan()?.spanContext().traceId ?? '');
    return 'done';
  });
  try {
    await inRootSpan(() => client.streams.publish(each, { id: 'two' }, 'two', { parent: fromCarrier(stored.result) }));
    await until(() => seen.length === 1);
    expect(seen).toEqual([stored.traceId]);
    expect(parentOf(named('publish traced_each')())).toBe(stored.spanId);
  } finally {
    await consumption.stop();
  }
});

it('hands a batch handler each message context, in its producer trace, and links them from the batch span', async () => {
  const contexts: Context[] = [];
  const consumption = await server.streams.consume(batch, async (items, info) => {
    contexts.push(...info.contexts);
    expect(info.contexts).toHaveLength(items.length);
  });
  try {
    const a = await inRootSpan(() => client.streams.publish(batch, { id: 'a' }, 'a'));
    const b = await inRootSpan(() => client.streams.publish(batch, { id: 'b' }, 'b'));
    await until(
      () =>
        contexts.length === 2 && telemetry.spans().filter((s) => s.name === 'process traced_batch batch').length > 0,
    );
    expect(contexts.map((c) => trace.getSpanContext(c)?.traceId).sort()).toEqual([a.traceId, b.traceId].sort());
    const batchSpans = telemetry.spans().filter((s) => s.name === 'process traced_batch batch');
    const linked = batchSpans.flatMap((s) => s.links.map((l) => l.context.traceId));
    expect(linked.sort()).toEqual([a.traceId, b.traceId].sort());
    expect(batchSpans.every((s) => s.parentSpanContext === undefined)).toBe(true);
  } finally {
    await consumption.stop();
  }
});

it('leaves messages without a trace untraced upstream: the consumer span starts a trace of its own', async () => {
  const seen: string[] = [];
  const consumption = await server.streams.consumeEach(each, async () => {
    seen.push(trace.getActiveSpan()?.spanContext().traceId ?? '');
    return 'done';
  });
  try {
    // Published outside any span (and not from the relay): only the PRODUCER span's own context travels.
    await client.streams.publish(each, { id: 'three' }, 'three');
    await until(() => seen.length === 1);
    expect(seen[0]).toBe(named('publish traced_each')()?.spanContext().traceId);
    expect(named('publish traced_each')()?.parentSpanContext).toBeUndefined();
  } finally {
    await consumption.stop();
  }
});
