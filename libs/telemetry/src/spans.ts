import { context, ROOT_CONTEXT, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { fromCarrier, type TraceCarrier } from './propagation';

/** trace_id and span_id of the active span, for log lines; empty when no span is recording. */
export function activeTraceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return trace.isSpanContextValid(span.spanContext()) ? { trace_id: traceId, span_id: spanId } : {};
}

/** Marks a span failed with the error's message (and, for unexpected errors, the exception event). */
export function recordFailure(span: Span, err: unknown, opts: { exception?: boolean; type?: string } = {}): void {
  const message = err instanceof Error ? err.message : String(err);
  if (opts.exception !== false && err instanceof Error) span.recordException(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.setAttribute('error.type', opts.type ?? (err instanceof Error ? err.name : 'error'));
}

/**
 * Runs `fn` outside any trace. Background loops (pollers, batch writers) are often first woken from
 * inside a request; without this their timers would carry that request's context forever and every
 * later poll would show up in that one trace.
 */
export function detached<T>(fn: () => T): T {
  return context.with(ROOT_CONTEXT, fn);
}

/**
 * Runs `fn` in a trace context stored earlier (toCarrier), e.g. with a queued notification: what it
 * does (an outgoing HTTP call, traced by the instrumentation) continues the trace that queued it.
 * Without a stored context, `fn` runs outside any trace.
 */
export function inStoredContext<T>(carrier: TraceCarrier | null | undefined, fn: () => T): T {
  return context.with(fromCarrier(carrier), fn);
}
