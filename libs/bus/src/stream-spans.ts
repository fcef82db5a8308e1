import type { JsMsg } from 'nats';
import type { Context, Span } from '@opentelemetry/api';
import type { StreamSpec } from '@payments/contracts';
import { extractFromHeaders, MessagingAttributes } from '@payments/telemetry';
import { contextWith, messagingAttributes, SpanKind, tracer } from './tracing';

/** The names a stream spec has on one bus: its stream and its subject, under the bus's prefix. */
export interface StreamNaming {
  streamName(spec: StreamSpec): string;
  subject(spec: StreamSpec): string;
}

/** The messaging attributes of a span about `spec`'s stream. */
export function streamAttributes(
  naming: StreamNaming,
  spec: StreamSpec,
  type: 'send' | 'process',
  name: string,
  extra: Record<string, string | number>,
) {
  return messagingAttributes(naming.subject(spec), type, name, {
    [MessagingAttributes.natsStream]: naming.streamName(spec),
    ...extra,
  });
}

/** A CONSUMER span for one message, child of the span that published it (carried in its headers). */
export function startConsumerSpan(naming: StreamNaming, spec: StreamSpec, m: JsMsg): { span: Span; context: Context } {
  const parent = extractFromHeaders(m.headers);
  const span = tracer.startSpan(
    `process ${spec.name}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: streamAttributes(naming, spec, 'process', 'consume', {
        [MessagingAttributes.consumerGroup]: spec.consumer,
        [MessagingAttributes.natsDeliveryCount]: m.info.redeliveryCount,
        [MessagingAttributes.bodySize]: m.data.length,
        // JetStream keeps the Nats-Msg-Id header of the publish with the stored message.
        [MessagingAttributes.messageId]: m.headers?.get('Nats-Msg-Id') ?? '',
      }),
    },
    parent,
  );
  return { span, context: contextWith(span, parent) };
}
