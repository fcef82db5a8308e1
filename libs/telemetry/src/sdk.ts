import type { IncomingMessage } from 'node:http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { KoaInstrumentation, KoaLayerType } from '@opentelemetry/instrumentation-koa';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK, type NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import {
  AlwaysOffSampler,
  BatchSpanProcessor,
  NoopSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { RedactingSpanProcessor } from './redaction';

export interface TelemetryOptions {
  /**
   * Replaces the environment's choice of span processors (tests: an in-memory exporter). The
   * redacting processor still runs first.
   */
  spanProcessors?: SpanProcessor[];
  /** Auto-instrument http, koa, pg and undici (default true). */
  instrument?: boolean;
}

export interface Telemetry {
  /** False when OTEL_SDK_DISABLED=true. */
  readonly enabled: boolean;
  /** Exports the spans still buffered and stops the SDK; call it last on shutdown. */
  shutdown(): Promise<void>;
}

/** Probes and scrapes are not worth a trace each. */
const UNTRACED_PATHS = /^\/(healthz|readyz|livez|metrics)(\/|\?|$)/;

/**
 * Starts OpenTelemetry for one app. Call it before anything else is loaded (each app's main.ts
 * imports its ./tracing first): the instrumentations patch http, koa, pg and undici as they are
 * required, and a module loaded earlier keeps its unpatched functions.
 *
 * Spans are exported (OTLP over HTTP, JSON) only when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, sampled per OTEL_TRACES_SAMPLER (default: every trace).
 * Without an endpoint the SDK still runs but samples nothing: trace ids are still made, propagated
 * and written in log lines, while spans are not recorded (recording spans only to drop them cost
 * the callback path about a third of its CPU, measured with bench/receivables).
 * OTEL_SDK_DISABLED=true turns it all off.
 */
export function startTelemetry(serviceName: string, options: TelemetryOptions = {}): Telemetry {
  const sdk = new NodeSDK(sdkConfiguration(serviceName, options));
  sdk.start();
  const enabled = process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';
  let stopped: Promise<void> | undefined;
  return {
    enabled,
    shutdown: () => (stopped ??= sdk.shutdown().catch(() => undefined)),
  };
}

function sdkConfiguration(serviceName: string, options: TelemetryOptions): Partial<NodeSDKConfiguration> {
  const recording = Boolean(options.spanProcessors) || exportEndpointConfigured();
  // Signed-link query strings and payer documents are taken out before any processor exports a span.
  const spans: Partial<NodeSDKConfiguration> = options.spanProcessors
    ? { spanProcessors: [new RedactingSpanProcessor(), ...options.spanProcessors] }
    : recording
      ? // Batched per OTEL_BSP_* (schedule delay, queue size); the exporter reads its endpoint and headers itself.
        { spanProcessors: [new RedactingSpanProcessor(), new BatchSpanProcessor(new OTLPTraceExporter())] }
      : // NodeSDK installs no tracer provider without a processor, and then no trace ids would exist.
        { spanProcessors: [new NoopSpanProcessor()], sampler: new AlwaysOffSampler() };
  return {
    serviceName,
    ...spans,
    instrumentations: options.instrument === false ? [] : instrumentations(recording),
    // Metrics are prom-client's (/metrics) and logs go to stdout: without these empty lists NodeSDK
    // would start OTLP metric and log exporters towards localhost:4318 of its own accord.
    metricReaders: [],
    logRecordProcessors: [],
  };
}

function exportEndpointConfigured(): boolean {
  return Boolean(
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim(),
  );
}

/**
 * The auto-instrumentations, less those named in OTEL_NODE_DISABLED_INSTRUMENTATIONS (comma-separated:
 * http, koa, pg, undici; the variable of OpenTelemetry's Node auto-instrumentation package), e.g. to
 * keep one hot path lighter.
 */
function instrumentations(recording: boolean): NonNullable<NodeSDKConfiguration['instrumentations']> {
  const disabled = new Set(
    (process.env.OTEL_NODE_DISABLED_INSTRUMENTATIONS ?? '').split(',').map((name) => name.trim().toLowerCase()),
  );
  // Nothing recorded: incoming HTTP still opens each request's trace (its ids go into the log lines),
  // but spans for every query and outgoing call would be made only to be dropped (about 5 % of
  // callback-svc's CPU in a profile of bench/receivables).
  if (!recording) for (const name of ['koa', 'pg', 'undici']) disabled.add(name);
  const all = {
    http: () =>
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.test(req.url ?? ''),
        // Outgoing calls outside any request (pollers) would each start a trace of their own.
        requireParentforOutgoingSpans: true,
      }),
    // Router spans only: one span per Koa middleware would bury the interesting ones.
    koa: () => new KoaInstrumentation({ ignoreLayersType: [KoaLayerType.MIDDLEWARE] }),
    // Queries of background pollers (outbox relay, delivery queue) are not traced unless work is.
    // Statements only, never their parameter values (payer names, documents): kysely sends every value
    // as a parameter, and enhancedDatabaseReporting (which would record them) stays off.
    pg: () => new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
    undici: () => new UndiciInstrumentation({ requireParentforSpans: true }),
  };
  return Object.entries(all)
    .filter(([name]) => !disabled.has(name))
    .map(([, create]) => create());
}

export { RedactingSpanProcessor, redactValue, QUERY_REDACTED } from './redaction';
