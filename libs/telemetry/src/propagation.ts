import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Context,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';

/**
 * The W3C trace context (traceparent, tracestate, baggage) as plain strings: what is stored beside
 * work that waits in Postgres (outbox rows, callback deliveries) so the work, when it runs, continues
 * the trace of the request that caused it.
 */
export type TraceCarrier = Record<string, string>;

/** The part of NATS MsgHdrs the propagator writes to (kept structural: this lib does not need nats). */
export interface HeaderWriter {
  set(key: string, value: string): void;
}

/** The part of NATS MsgHdrs the propagator reads from; MsgHdrs.get answers '' for a missing key. */
export interface HeaderReader {
  get(key: string): string;
  keys(): string[];
}

const headerSetter: TextMapSetter<HeaderWriter> = {
  set: (headers, key, value) => headers.set(key, value),
};

const headerGetter: TextMapGetter<HeaderReader> = {
  get: (headers, key) => headers.get(key) || undefined,
  keys: (headers) => headers.keys(),
};

/** Writes the trace context of `ctx` into message headers. */
export function injectIntoHeaders(headers: HeaderWriter, ctx: Context = context.active()): void {
  propagation.inject(ctx, headers, headerSetter);
}

/** The context a received message was sent in (ROOT when it carries none). */
export function extractFromHeaders(headers: HeaderReader | undefined): Context {
  return headers ? propagation.extract(ROOT_CONTEXT, headers, headerGetter) : ROOT_CONTEXT;
}

/** The trace context of `ctx` as a string record; undefined when there is nothing to propagate. */
export function toCarrier(ctx: Context = context.active()): TraceCarrier | undefined {
  const carrier: TraceCarrier = {};
  propagation.inject(ctx, carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/**
 * The context stored in a carrier (ROOT when there is none). Deliberately not the active context:
 * stored work runs later, from pollers whose own context must not become its parent.
 */
export function fromCarrier(carrier: TraceCarrier | null | undefined): Context {
  return carrier ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
}
