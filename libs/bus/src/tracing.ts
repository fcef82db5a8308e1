import { context, SpanKind, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { headers as natsHeaders, type MsgHdrs } from 'nats';
import { ServiceError } from '@payments/contracts';
import { injectIntoHeaders, MessagingAttributes, recordFailure, toCarrier } from '@payments/telemetry';

/** Spans of the bus: request (CLIENT), serve (SERVER), stream publish (PRODUCER), consume (CONSUMER). */
export const tracer = trace.getTracer('@payments/bus');

export { SpanKind };

/** The messaging attributes every bus span carries. */
export function messagingAttributes(
  subject: string,
  operationType: 'send' | 'process',
  operationName: string,
  extra: Attributes = {},
): Attributes {
  return {
    [MessagingAttributes.system]: 'nats',
    [MessagingAttributes.destinationName]: subject,
    [MessagingAttributes.operationType]: operationType,
    [MessagingAttributes.operationName]: operationName,
    ...extra,
  };
}

/** `span` made active on top of `parent` (the context to run a handler in, or to inject). */
export function contextWith(span: Span, parent: Context = context.active()): Context {
  return trace.setSpan(parent, span);
}

/**
 * Headers carrying the trace context of `ctx`, added to the ones a message already has (a claim
 * check). Headers are created only when there is something to carry: without them a message stays
 * as small and cheap as before.
 */
export function withTraceHeaders(ctx: Context, headers: MsgHdrs | undefined): MsgHdrs | undefined {
  if (headers) {
    injectIntoHeaders(headers, ctx);
    return headers;
  }
  const carrier = toCarrier(ctx);
  if (!carrier) return undefined;
  const created = natsHeaders();
  for (const [key, value] of Object.entries(carrier)) created.set(key, value);
  return created;
}

/**
 * Marks a span failed. A ServiceError is an answer, not a crash: it is recorded by its code, without
 * an exception event (a 404 needs no stack trace in the trace view).
 */
export function failSpan(span: Span, err: unknown): void {
  if (err instanceof ServiceError) recordFailure(span, err, { exception: false, type: err.code });
  else recordFailure(span, err);
}
