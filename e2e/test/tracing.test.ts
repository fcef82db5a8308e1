import { randomBytes } from 'node:crypto';
import type { AuthenticateResponse, RegisteredCallback } from '@payments/contracts';
import { createTestDatabase } from '@payments/db';
import { createTenant, openAdminDatabase } from '@payments/gateway';
import { ApiClient } from '../support/api-client';
import { clientPayload, receivablePayload } from '../support/fixtures';
import { OtlpCollector, OtlpKind, type CollectedSpan } from '../support/otlp-collector';
import { AppProcess } from '../support/process';
import { CallbackReceiver, waitFor } from '../support/receiver';
import { deleteBusStreams, freePort } from '../support/system';

// A receivables create is traced here with an in-memory span exporter. The OpenTelemetry
// auto-instrumentation (http, koa, pg, undici) hooks Node's own require, which jest's module loader
// bypasses, so the apps cannot be traced in this process as they are in production. Instead every app
// runs as its own process, exactly as `npm start` runs it, exporting OTLP/HTTP to a collector started
// here: the in-memory span store is the collector's (support/otlp-collector.ts). One trace is then
// checked across the processes, which is also the only way to see context cross real NATS headers and
// the Postgres outbox and delivery queue between processes.
let database: { url: string; drop: () => Promise<void> };
let adminDb: Awaited<ReturnType<typeof openAdminDatabase>>;
let collector: OtlpCollector;
let receiver: CallbackReceiver;
let busPrefix: string;
let gatewayUrl: string;
let sandboxUrl: string;
const apps: Record<string, AppProcess> = {};

beforeAll(async () => {
  database = await createTestDatabase();
  collector = await new OtlpCollector().start();
  receiver = await new CallbackReceiver().start();
  busPrefix = `t${randomBytes(5).toString('hex')}`;
  const [gatewayPort, sandboxPort, receivablesPort] = [await freePort(), await freePort(), await freePort()];
  gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    BUS_PREFIX: busPrefix,
    BUS_TIMEOUT_MS: '5000',
    LOG_LEVEL: 'info',
    PORT: String(gatewayPort),
    ADMIN_PORT: '0',
    BANK_SANDBOX_PORT: String(sandboxPort),
    RECEIVABLES_PORT: String(receivablesPort),
    CLIENTS_PORT: '0',
    CALLBACK_PORT: '0',
    BOOKLET_PORT: '0',
    PROVIDER_BASE_URL: sandboxUrl,
    BANK_SANDBOX_WEBHOOK_URL: `http://127.0.0.1:${receivablesPort}/provider/webhooks/bank-sandbox`,
    CALLBACK_POLL_INTERVAL_MS: '100',
    OTEL_SDK_DISABLED: 'false',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  for (const app of ['bank-sandbox', 'gateway', 'clients-svc', 'receivables-svc', 'callback-svc'])
    apps[app] = new AppProcess(app, env);
  const ready: Record<string, string> = {
    'bank-sandbox': 'bank-sandbox ready',
    gateway: 'gateway listening',
    'clients-svc': 'clients-svc ready',
    'receivables-svc': 'receivables-svc ready',
    'callback-svc': 'callback-svc ready',
  };
  await Promise.all(Object.entries(apps).map(([app, proc]) => proc.start(ready[app], 60_000)));
  adminDb = await openAdminDatabase(database.url);
}, 90_000);

afterAll(async () => {
  await Promise.allSettled(Object.values(apps).map((p) => p.stop()));
  await receiver?.stop();
  await collector?.stop();
  await adminDb?.destroy().catch(() => undefined);
  if (busPrefix) await deleteBusStreams(busPrefix).catch(() => undefined);
  await database?.drop().catch(() => undefined);
});

const byName = (spans: CollectedSpan[], service: string, name: string, kind?: number) =>
  spans.filter((s) => s.service === service && s.name === name && (kind === undefined || s.kind === kind));

it('traces one receivables create as one trace: gateway, receivables-svc intake, registration worker, provider call, callback delivery', async () => {
  const tenant = await createTenant(adminDb, 'Tracing');
  const auth = await new ApiClient(gatewayUrl).post<AuthenticateResponse>('/api/v1/authenticate', undefined, {
    authorization: `Bearer ${tenant.integration_token}`,
  });
  expect(auth.status).toBe(200);
  const api = new ApiClient(gatewayUrl, auth.json.access_token);
  const client = clientPayload();
  expect((await api.postIdempotent('/api/v1/clients', [client])).status).toBe(201);
  const receivable = receivablePayload(client.client_id, receiver.url);
  const created = await api.postIdempotent('/api/v1/accounts-receivable', [receivable]);
  expect(created.status).toBe(202);

  await waitFor(() => receiver.delivered().length === 1, 30_000, 'the registered callback');
  const callback = receiver.delivered()[0];
  expect(JSON.parse(callback.body)).toMatchObject({
    type: 'registered',
    success: true,
    accounts_receivable_id: receivable.account_receivable_id,
  });

  // The callback's own POST carries the trace (W3C traceparent), as every outgoing HTTP call does.
  const traceId = /^00-([0-9a-f]{32})-[0-9a-f]{16}-0[01]$/.exec(callback.headers.traceparent ?? '')?.[1];
  expect(traceId).toBeDefined();

  // Spans arrive in batches (OTEL_BSP_SCHEDULE_DELAY); wait for the whole tree: every span's parent
  // present, and the pieces asked for there.
  const trace = () => collector.trace(traceId!);
  const complete = () => {
    const spans = trace();
    const ids = new Set(spans.map((s) => s.spanId));
    return (
      spans.every((s) => !s.parentSpanId || ids.has(s.parentSpanId)) &&
      byName(spans, 'callback-svc', 'deliver callback').length > 0 &&
      spans.some((s) => s.service === 'callback-svc' && s.kind === OtlpKind.client) &&
      // Leaves of other processes, which export on their own schedule: the sandbox's server span too.
      spans.some((s) => s.service === 'bank-sandbox' && s.kind === OtlpKind.server) &&
      new Set(spans.map((s) => s.service)).size === 5
    );
  };
  // Not fatal by itself: the assertions below name what is missing.
  await waitFor(complete, 15_000, `the spans of trace ${traceId}`).catch(() => undefined);
  const spans = trace();

  // One root: the gateway's HTTP server span of POST /api/v1/accounts-receivable.
  const ids = new Set(spans.map((s) => s.spanId));
  const roots = spans.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId));
  expect(
    roots.map(
      (r) =>
        `${r.service} ${r.kind} ${r.attributes['http.request.method']} ${r.attributes['url.path'] ?? r.attributes['http.target']}`,
    ),
  ).toEqual([`gateway ${OtlpKind.server} POST /api/v1/accounts-receivable`]);

  // gateway -> receivables-svc over NATS request-reply.
  expect(byName(spans, 'gateway', 'request receivables.create', OtlpKind.client)).toHaveLength(1);
  const intake = byName(spans, 'receivables-svc', 'process receivables.create', OtlpKind.server);
  expect(intake).toHaveLength(1);
  expect(intake[0].attributes).toMatchObject({
    'messaging.system': 'nats',
    'messaging.destination.name': `${busPrefix}.receivables.create`,
  });

  // receivables-svc intake -> outbox -> JetStream -> registration worker.
  const registration = byName(spans, 'receivables-svc', 'process registrations', OtlpKind.consumer);
  expect(registration).toHaveLength(1);
  const registrationPublish = spans.find((s) => s.spanId === registration[0].parentSpanId);
  expect(registrationPublish).toMatchObject({
    service: 'receivables-svc',
    name: 'publish registrations',
    kind: OtlpKind.producer,
  });

  // The worker's provider call (ky over fetch, traced by the undici instrumentation), answered by the sandbox.
  const providerCalls = spans.filter(
    (s) =>
      s.service === 'receivables-svc' &&
      s.kind === OtlpKind.client &&
      String(s.attributes['url.full'] ?? '').startsWith(sandboxUrl),
  );
  const providerCallsUnderWorker = providerCalls.filter((s) => isDescendant(spans, s, registration[0]));
  expect(providerCallsUnderWorker.length).toBeGreaterThanOrEqual(1);
  expect(
    spans.some(
      (s) =>
        s.service === 'bank-sandbox' &&
        s.kind === OtlpKind.server &&
        providerCallsUnderWorker.some((c) => c.spanId === s.parentSpanId),
    ),
  ).toBe(true);

  // registration worker -> outbox -> JetStream -> callback-svc -> delivery queue (Postgres) -> POST.
  const consumed = byName(spans, 'callback-svc', 'process callbacks', OtlpKind.consumer);
  expect(consumed).toHaveLength(1);
  expect(isDescendant(spans, consumed[0], registration[0])).toBe(true);
  const delivery = byName(spans, 'callback-svc', 'deliver callback', OtlpKind.internal);
  expect(delivery).toHaveLength(1);
  expect(delivery[0].parentSpanId).toBe(consumed[0].spanId);
  expect(delivery[0].attributes).toMatchObject({ 'callback.status': 'delivered', 'http.response.status_code': 200 });
  const post = spans.filter(
    (s) => s.service === 'callback-svc' && s.kind === OtlpKind.client && s.attributes['url.full'] === receiver.url,
  );
  expect(post).toHaveLength(1);
  expect(post[0].parentSpanId).toBe(delivery[0].spanId);
  expect(post[0].attributes['http.request.method']).toBe('POST');

  // Beside the asked-for services: clients-svc (intake checks the client exists) and the sandbox.
  expect(new Set(spans.map((s) => s.service))).toEqual(
    new Set(['gateway', 'clients-svc', 'receivables-svc', 'bank-sandbox', 'callback-svc']),
  );
  if (process.env.PRINT_TRACE) console.log(renderTree(spans));
  ourNumber = (JSON.parse(callback.body) as RegisteredCallback).payment_data.our_number;
});

let ourNumber = '';

it('writes the trace and span ids of the active span on log lines', async () => {
  // Paying at the sandbox logs "charge paid" (info) inside the HTTP server span of the pay request.
  const paid = await new ApiClient(sandboxUrl).post(`/sandbox/charges/${ourNumber}/pay`, { method: 'pix' });
  expect(paid.status).toBe(200);
  const line = () => apps['bank-sandbox'].output.split('\n').find((l) => l.includes('"charge paid"'));
  await waitFor(() => line() !== undefined, 5_000, 'the charge paid log line');
  const logged = JSON.parse(line()!) as { trace_id?: string; span_id?: string };
  expect(logged.trace_id).toMatch(/^[0-9a-f]{32}$/);
  await waitFor(
    () => collector.trace(logged.trace_id!).some((s) => s.spanId === logged.span_id),
    10_000,
    'the span named by the log line',
  );
  const span = collector.trace(logged.trace_id!).find((s) => s.spanId === logged.span_id)!;
  expect(span.service).toBe('bank-sandbox');
  expect(
    collector
      .trace(logged.trace_id!)
      .some((s) => s.kind === OtlpKind.server && s.attributes['http.request.method'] === 'POST'),
  ).toBe(true);
  // Lines written outside any span (start-up) carry no ids.
  const ready = JSON.parse(
    apps['bank-sandbox'].output.split('\n').find((l) => l.includes('"bank-sandbox ready"'))!,
  ) as Record<string, unknown>;
  expect(ready.trace_id).toBeUndefined();
  payTraceId = logged.trace_id!;
});

let payTraceId = '';

it("continues the payment's trace through the provider webhook to the paid callback", async () => {
  await waitFor(() => receiver.delivered().some((r) => r.body.includes('"type":"paid"')), 20_000, 'the paid callback');
  const paid = receiver.delivered().find((r) => r.body.includes('"type":"paid"'))!;
  // The sandbox queued the webhook with the pay request's context; its delivery, the webhook's handling
  // in receivables-svc and the callback to the ERP all continue that trace.
  expect(paid.headers.traceparent).toMatch(new RegExp(`^00-${payTraceId}-`));
  const webhookPosts = (spans: CollectedSpan[]) =>
    spans.filter(
      (s) =>
        s.service === 'bank-sandbox' &&
        s.kind === OtlpKind.client &&
        s.attributes['url.path'] === '/provider/webhooks/bank-sandbox',
    );
  // Each process exports on its own schedule: under CI load the sandbox's batch can arrive after
  // callback-svc's, so wait for both ends of the chain before judging how they link.
  const complete = () => {
    const trace = collector.trace(payTraceId);
    return webhookPosts(trace).length > 0 && byName(trace, 'callback-svc', 'deliver callback').length > 0;
  };
  await waitFor(complete, 20_000, 'the webhook and delivery spans in the payment trace').catch(() => undefined);
  const spans = collector.trace(payTraceId);
  const webhookPost = webhookPosts(spans);
  expect(webhookPost).toHaveLength(1);
  const handled = spans.filter(
    (s) => s.service === 'receivables-svc' && s.kind === OtlpKind.server && s.parentSpanId === webhookPost[0].spanId,
  );
  expect(handled).toHaveLength(1);
  const delivery = byName(spans, 'callback-svc', 'deliver callback', OtlpKind.internal);
  expect(delivery).toHaveLength(1);
  expect(isDescendant(spans, delivery[0], handled[0])).toBe(true);
});

/** Whether `span` hangs (at any depth) under `ancestor` in this trace. */
function isDescendant(spans: CollectedSpan[], span: CollectedSpan, ancestor: CollectedSpan): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (let s: CollectedSpan | undefined = span; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined) {
    if (s.parentSpanId === ancestor.spanId) return true;
  }
  return false;
}

/** The trace as an indented tree (PRINT_TRACE=1), to look at what a request produces. */
function renderTree(spans: CollectedSpan[]): string {
  const ids = new Set(spans.map((s) => s.spanId));
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const s of spans.filter((c) =>
      parent === undefined ? !c.parentSpanId || !ids.has(c.parentSpanId) : c.parentSpanId === parent,
    )) {
      lines.push(`${'  '.repeat(depth)}${s.service}: ${s.name} (kind ${s.kind})`);
      walk(s.spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}
