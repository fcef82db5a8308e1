import type { JsMsg } from 'nats';
import { context, ROOT_CONTEXT, type Context, type Link, type Span } from '@opentelemetry/api';
import type {
  BusRegistryShape,
  JobOutcome,
  RegisteredStream,
  StreamMessage,
  StreamRegistry,
  StreamSpec,
} from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { MessagingAttributes, recordFailure } from '@payments/telemetry';
import { whileBeating } from './heartbeat';
import { JobFailures } from './job-failures';
import type { BatchHandler, MessageHandler } from './job-handlers';
import { outageRetryMs } from './stream-settings';
import { startConsumerSpan, streamAttributes, type StreamNaming } from './stream-spans';
import { contextWith, failSpan, SpanKind, tracer } from './tracing';

/**
 * Job messages through their handlers, in their producers' traces: acked, retried, counted as
 * failures or dead-lettered as the outcome says. DurableStreams' consumers hand it what they pulled.
 */
export class JobRunner<M extends BusRegistryShape['streams'] = StreamRegistry> {
  constructor(
    private readonly naming: StreamNaming,
    private readonly failures: JobFailures,
    private readonly logger: Logger,
    private readonly isOutage: (err: unknown) => boolean,
    private readonly outageBackoffMs: number,
  ) {}

  /** One message through its handler: acked, retried, counted as a failure or dead-lettered (see consumeEach). */
  async handleOne<S extends RegisteredStream<M>>(
    spec: S,
    handler: MessageHandler<StreamMessage<S, M>>,
    m: JsMsg,
    ackWaitMs: number,
  ): Promise<void> {
    const stream = this.naming.streamName(spec);
    // A failed message's retry copy arrived before its backoff ended: waiting is not a failure.
    const wait = JobFailures.waitMs(m);
    if (wait > 0) return m.nak(wait);
    const { span, context: spanContext } = startConsumerSpan(this.naming, spec, m);
    let outcome: JobOutcome;
    try {
      const decoded = await this.failures.decode<StreamMessage<S, M>>(spec, stream, m);
      if (!decoded) {
        span.setAttribute('messaging.nats.dead_lettered', true);
        return span.end();
      }
      outcome = await whileBeating([m], ackWaitMs, () =>
        context.with(spanContext, () => handler(decoded.value, { deliveryCount: m.info.redeliveryCount })),
      );
    } catch (err) {
      failSpan(span, err);
      if (this.isOutage(err)) {
        // Not the job's fault: counted, a long outage would dead-letter every job it held up.
        const retryInMs = outageRetryMs(m.info.redeliveryCount, this.outageBackoffMs);
        context.with(spanContext, () =>
          this.logger.warn(
            { err, stream, seq: m.seq, retryInMs },
            'a dependency is out; the job is retried, uncounted',
          ),
        );
        m.nak(retryInMs);
        return span.end();
      }
      context.with(spanContext, () =>
        this.logger.error({ err, stream, seq: m.seq }, 'message handler failed; its failure is counted'),
      );
      await this.failures.failed(spec, stream, m, err);
      return span.end();
    }
    await this.settle(spec, stream, m, outcome, span);
    span.end();
  }

  /**
   * A batch through its handler, in one call: poison dead-lettered alone, the rest acked, retried or
   * dead-lettered per its outcome; a handler that throws has the whole batch redelivered after a
   * second, uncounted (see BatchHandler).
   */
  async handleBatch<S extends RegisteredStream<M>>(
    spec: S,
    handler: BatchHandler<StreamMessage<S, M>>,
    batch: JsMsg[],
    ackWaitMs: number,
  ): Promise<void> {
    const stream = this.naming.streamName(spec);
    const items: StreamMessage<S, M>[] = [];
    const good: JsMsg[] = [];
    // One span per message, in its producer's trace; the batch's work runs in a span that links them.
    const spans: Array<{ span: Span; context: Context }> = [];
    for (const m of batch) {
      const consumed = startConsumerSpan(this.naming, spec, m);
      // Poison (not JSON, or not the stream's messageSchema) is dead-lettered alone; the batch goes on.
      const decoded = await this.failures.decode<StreamMessage<S, M>>(spec, stream, m);
      if (decoded) {
        items.push(decoded.value);
        good.push(m);
        spans.push(consumed);
      } else {
        consumed.span.setAttribute('messaging.nats.dead_lettered', true);
        consumed.span.end();
      }
    }
    if (good.length === 0) return;
    const links: Link[] = spans.map((s) => ({ context: s.span.spanContext() }));
    const batchSpan = tracer.startSpan(
      `process ${spec.name} batch`,
      {
        kind: SpanKind.CONSUMER,
        attributes: streamAttributes(this.naming, spec, 'process', 'consume', {
          [MessagingAttributes.consumerGroup]: spec.consumer,
          [MessagingAttributes.batchCount]: good.length,
        }),
        links,
      },
      ROOT_CONTEXT,
    );
    try {
      const outcomes = await whileBeating(good, ackWaitMs, () =>
        context.with(contextWith(batchSpan), () =>
          handler(items, {
            deliveryCounts: good.map((m) => m.info.redeliveryCount),
            contexts: spans.map((s) => s.context),
          }),
        ),
      );
      await Promise.all(good.map((m, i) => this.settle(spec, stream, m, outcomes?.[i] ?? 'done', spans[i].span)));
    } catch (err) {
      failSpan(batchSpan, err);
      for (const s of spans) recordFailure(s.span, err, { exception: false });
      context.with(contextWith(batchSpan), () =>
        this.logger.error({ err, stream, count: good.length }, 'batch handler failed; messages will be redelivered'),
      );
      for (const m of good) m.nak(1_000);
    }
    batchSpan.end();
    for (const s of spans) s.span.end();
  }

  /** Acks, naks or dead-letters a handled message as its outcome says. */
  private async settle(spec: StreamSpec, stream: string, m: JsMsg, outcome: JobOutcome, span: Span): Promise<void> {
    if (outcome === 'done') return m.ack();
    if ('deadLetter' in outcome) {
      span.setAttribute('messaging.nats.dead_lettered', true);
      return this.failures.deadLetter(spec, stream, m, outcome.deadLetter);
    }
    span.setAttribute('messaging.nats.retry_in_ms', outcome.retryInMs);
    m.nak(outcome.retryInMs);
  }
}
