import { nanos, type Consumer, type JetStreamClient, type JsMsg, type NatsConnection } from 'nats';
import { context, ROOT_CONTEXT, type Context, type Link, type Span } from '@opentelemetry/api';
import {
  withStreamVersion,
  type BusRegistryShape,
  type BusService,
  type JobOutcome,
  type RegisteredStream,
  type StreamMessage,
  type StreamRegistry,
  type StreamSpec,
} from '@payments/contracts';
import { doublingDelayMs } from '@payments/backoff';
import type { Logger } from '@payments/logger';
import { countWork } from '@payments/metrics';
import { extractFromHeaders, MessagingAttributes, recordFailure } from '@payments/telemetry';
import { DeadLetterBox } from './dead-letters';
import { FairQueues } from './fair-queues';
import { PullLoop } from './pull-loop';
import { DEFAULT_JOB_MAX_FAILURES, JobFailures } from './job-failures';
import { DEFAULT_STREAM_MAX_BYTES, streamFill, type StreamFill } from './stream-limits';
import { retryTransient } from './jetstream-retry';
import { provisionJobStreams, type ProvisionEntry } from './provision';
import { BusTopologyError, checkTopology } from './topology-check';
import { DEFAULT_ACK_WAIT_MS } from './topology-config';
import { contextWith, failSpan, messagingAttributes, SpanKind, tracer, withTraceHeaders } from './tracing';

/** consumeFairly's default window: messages held at once, queued per key. */
export const DEFAULT_FAIR_WINDOW = 512;
/** The key of a message that cannot be decoded: it is dead-lettered when its turn comes. */
const POISON = Symbol('poison');

// DEFAULT_ACK_WAIT_MS, and every consumer's and stream's settings: topology-config.ts.
export { DEFAULT_ACK_WAIT_MS };

/**
 * Runs `work` while telling JetStream, every third of the ack wait, that `messages` are in progress
 * (`working()`): a live handler keeps its messages however long it runs, a dead one loses them after
 * one ack wait.
 */
async function whileBeating<T>(messages: readonly JsMsg[], ackWaitMs: number, work: () => Promise<T>): Promise<T> {
  const beat = keepBeating((each) => messages.forEach(each), ackWaitMs);
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}

/**
 * Sends an in-progress ack for every message `forEach` visits, every third of the ack wait, until the
 * returned timer is cleared; the timer does not keep the process alive.
 */
function keepBeating(forEach: (each: (m: JsMsg) => void) => void, ackWaitMs: number): NodeJS.Timeout {
  const beat = setInterval(
    () => {
      try {
        forEach((m) => m.working());
      } catch {
        // The connection is closing: the ack wait runs out and the job goes to another instance.
      }
    },
    Math.max(1, Math.floor(ackWaitMs / 3)),
  );
  beat.unref();
  return beat;
}

/** A service's stream settings (its config's fields of the same names); the defaults are DEFAULT_*. */
export interface StreamSettings {
  /** JOB_MAX_FAILURES: handler failures after which a job message is dead-lettered. */
  jobMaxFailures?: number;
  /** First retry delay after a failure, doubled per failure up to 5 min. Default 1 s (tests shorten it). */
  jobFailureBackoffMs?: number;
  /** STREAM_MAX_BYTES: every stream's max_bytes; a full stream refuses publishes (discard new). */
  streamMaxBytes?: number;
  /** STREAM_REPLICAS: every stream's num_replicas (3 on a 3-node cluster); default 1. */
  streamReplicas?: number;
  /** A handler error that is a dependency's outage: retried uncounted (BusOptions.isOutage). */
  isOutage?: (err: unknown) => boolean;
}

/** The retry delay of a job held up by an outage: from the failure backoff, doubled per delivery, at most 30 s. */
export function outageRetryMs(deliveryCount: number, firstMs: number): number {
  return doublingDelayMs(deliveryCount, { firstMs, maxMs: 30_000 });
}

/**
 * Handles a batch; may return one outcome per item (same order) to retry some of them. Returning
 * nothing acks them all; throwing retries them all after a second, uncounted: a batch's failure is its
 * store's, not one message's (a message's own fault, poison, is dead-lettered before the handler). `contexts` holds, per item, the
 * context of its own CONSUMER span (a child of its producer's): what to keep with the item when its
 * work goes on later, so that work stays in the trace that produced it.
 */
export type BatchHandler<T> = (
  items: T[],
  info: { deliveryCounts: number[]; contexts: Context[] },
) => Promise<void | JobOutcome[]>;

/**
 * deliveryCount is 1 on the first delivery. Returning `{ retryInMs }` (e.g. the provider is down) retries
 * the message without counting a failure; throwing counts one, and after JOB_MAX_FAILURES of them the
 * message is dead-lettered (see JobFailures).
 */
export type MessageHandler<T> = (item: T, info: { deliveryCount: number }) => Promise<JobOutcome>;

/** consumeFairly's options (see there). */
export interface FairOptions<T> {
  /** The queue a message goes to (e.g. its tenant): keys take turns at the slots. */
  key: (item: T) => string;
  /** Slots for any key; default 16. */
  concurrency?: number;
  /** Slots beyond `concurrency` only for a key with nothing running; default 0. */
  spare?: number;
  ackWaitMs?: number;
  /** Messages held at once, queued and in flight; default DEFAULT_FAIR_WINDOW. */
  window?: number;
}

export interface Consumption {
  /** Stops taking messages and waits for the batch in hand to be handled and acked. */
  stop(): Promise<void>;
}

/**
 * Durable work on JetStream: work-queue streams (a message leaves once acked), publish with
 * Nats-Msg-Id so a republished message is dropped inside the de-duplication window, and a consumer
 * that hands messages to the handler in batches (whatever has arrived meanwhile) and acks a batch
 * only after the handler resolved, i.e. after the service's own transaction committed.
 */
export class DurableStreams<M extends BusRegistryShape['streams'] = StreamRegistry> {
  // One client for every publish: nc.jetstream() builds a new one (options, API objects) per call.
  private js: JetStreamClient | undefined;
  private readonly maxBytes: number;
  private readonly replicas: number;
  /** Poison and repeatedly failing job messages go here; the admin CLI lists and re-drives them. */
  readonly deadLetters: DeadLetterBox;
  private readonly failures: JobFailures;
  private readonly deadLetterListeners: Array<(stream: string) => void> = [];
  private readonly isOutage: (err: unknown) => boolean;
  private readonly outageBackoffMs: number;

  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly logger: Logger,
    settings: StreamSettings = {},
  ) {
    this.maxBytes = settings.streamMaxBytes ?? DEFAULT_STREAM_MAX_BYTES;
    this.replicas = settings.streamReplicas ?? 1;
    this.isOutage = settings.isOutage ?? (() => false);
    this.outageBackoffMs = settings.jobFailureBackoffMs ?? 1_000;
    this.deadLetters = new DeadLetterBox(nc, () => this.jetstream(), prefix);
    this.failures = new JobFailures(
      () => this.jetstream(),
      this.deadLetters,
      {
        maxFailures: settings.jobMaxFailures ?? DEFAULT_JOB_MAX_FAILURES,
        failureBackoffMs: settings.jobFailureBackoffMs ?? 1_000,
      },
      logger,
      (spec) => this.deadLetterListeners.forEach((listener) => listener(spec.name)),
    );
  }

  /** Told the stream's name (StreamSpec.name) of each message dead-lettered here (a metric counts them). */
  onDeadLetter(listener: (stream: string) => void): void {
    this.deadLetterListeners.push(listener);
  }

  /** How full each stream is, the dead-letter stream included (for a gauge; streams not created yet are left out). */
  fill(specs: readonly Pick<StreamSpec, 'name'>[]): Promise<StreamFill[]> {
    return streamFill(this.nc, this.prefix, [...specs.map((s) => s.name), 'dead_letters']);
  }

  streamName(spec: StreamSpec): string {
    return `${this.prefix}_${spec.name}`;
  }

  subject(spec: StreamSpec): string {
    return `${this.prefix}.${spec.subject}`;
  }

  /**
   * The start-up check of `service` (topology-check.ts): with info calls only, the streams it
   * publishes to or consumes, its consumers, the dead letters and its claim stores are there, with at
   * least this bus's STREAM_REPLICAS and STREAM_MAX_BYTES; else BusTopologyError, each difference
   * named. Provisioning them is `npm run admin -- bus provision`'s, never a service's.
   */
  check(service: BusService): Promise<void> {
    return checkTopology(this.nc, {
      service,
      prefix: this.prefix,
      maxBytes: this.maxBytes,
      replicas: this.replicas,
      logger: this.logger,
    });
  }

  /**
   * Creates or raises each spec's stream and durable consumer, and the dead-letter stream, as the
   * provisioner does (provision.ts; it never lowers replicas or max_bytes): for tests and tools on
   * a bus whose user may manage streams (a dev NATS, the admin user), never for a service.
   */
  provision(...specs: StreamSpec[]): Promise<ProvisionEntry[]> {
    return this.provisionWith({}, ...specs);
  }

  /** As provision, with the consumers' ack wait (default DEFAULT_ACK_WAIT_MS): a test's short one. */
  provisionWith(opts: { ackWaitMs?: number }, ...specs: StreamSpec[]): Promise<ProvisionEntry[]> {
    return provisionJobStreams(this.nc, specs, {
      prefix: this.prefix,
      maxBytes: this.maxBytes,
      replicas: this.replicas,
      logger: this.logger,
      ackWaitMs: opts.ackWaitMs,
    });
  }

  /**
   * Publishes durably, with the stream's message version in the body (withStreamVersion); resolves
   * once the stream has stored it. `duplicate` is true when the id was seen.
   * The PRODUCER span is a child of `parent` (default: the active context); the outbox relay passes the
   * context stored with the row, i.e. that of the request that caused the message.
   */
  publish<S extends RegisteredStream<M>>(
    spec: S,
    payload: StreamMessage<S, M>,
    msgId: string,
    opts: { parent?: Context } = {},
  ): Promise<{ duplicate: boolean }> {
    return this.publishJson(spec, JSON.stringify(withStreamVersion(spec, payload)), msgId, opts);
  }

  /**
   * As publish, for a payload already serialized as JSON (the outbox stores it so: no parse and
   * re-encode), version included. Unchecked: any JSON goes, as a test that sends a malformed message needs.
   */
  async publishJson(
    spec: StreamSpec,
    json: string,
    msgId: string,
    opts: { parent?: Context } = {},
  ): Promise<{ duplicate: boolean }> {
    const parent = opts.parent ?? context.active();
    const data = Buffer.from(json);
    const span = tracer.startSpan(
      `publish ${spec.name}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: this.attributes(spec, 'send', 'publish', {
          [MessagingAttributes.messageId]: msgId,
          [MessagingAttributes.bodySize]: data.length,
        }),
      },
      parent,
    );
    try {
      const headers = withTraceHeaders(contextWith(span, parent), undefined);
      countWork('busPublishes');
      const ack = await this.jetstream().publish(this.subject(spec), data, {
        msgID: msgId,
        expect: { streamName: this.streamName(spec) },
        headers,
      });
      if (ack.duplicate) span.setAttribute('messaging.nats.duplicate', true);
      return { duplicate: ack.duplicate };
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  }

  private jetstream(): JetStreamClient {
    return (this.js ??= this.nc.jetstream());
  }

  private attributes(spec: StreamSpec, type: 'send' | 'process', name: string, extra: Record<string, string | number>) {
    return messagingAttributes(this.subject(spec), type, name, {
      [MessagingAttributes.natsStream]: this.streamName(spec),
      ...extra,
    });
  }

  /** A CONSUMER span for one message, child of the span that published it (carried in its headers). */
  private startConsumerSpan(spec: StreamSpec, m: JsMsg): { span: Span; context: Context } {
    const parent = extractFromHeaders(m.headers);
    const span = tracer.startSpan(
      `process ${spec.name}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: this.attributes(spec, 'process', 'consume', {
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

  /**
   * Handles messages one by one, up to `concurrency` at once, each acked or retried on its own
   * outcome. A handler that throws has its failure counted and the message retried after a backoff,
   * until JOB_MAX_FAILURES, when it is dead-lettered; a message that is not JSON or not its stream's
   * messageSchema (poison) is dead-lettered at once, without reaching the handler. Messages taken
   * while every slot is busy are held and kept alive with in-progress acks until they start
   * (consumeFairly with one key, its window), and no more are taken than the window has room for: a
   * message waiting unread in the client's buffer has no in-progress ack, and was redelivered (the
   * work done twice) once it waited longer than the ack wait.
   */
  async consumeEach<S extends RegisteredStream<M>>(
    spec: S,
    handler: MessageHandler<StreamMessage<S, M>>,
    opts: { concurrency?: number; ackWaitMs?: number } = {},
  ): Promise<Consumption> {
    const concurrency = opts.concurrency ?? 16;
    return this.consumeFairly(spec, handler, { ...opts, concurrency, key: () => '' });
  }

  /**
   * As consumeEach, but fair across keys (e.g. tenants): up to `window` messages are held, queued per
   * `key` of their payload, and each free slot goes to the key with the fewest running (FairQueues), so
   * a key with a long backlog and one with a few messages share the `concurrency` slots equally. Outcomes, failures and dead letters
   * are consumeEach's. The fairness is only as wide as the window: messages beyond it are still taken
   * in stream order, so a key whose messages lie behind more than `window` of another's waits until
   * the window reaches them. Messages are pulled on demand: each pull (a fetch, expiring after 5 s)
   * asks for at most the room left in the window, so every message received is held at once; those
   * beyond the window stay in the stream, free for another instance. Held messages are kept from
   * redelivery with in-progress acks (every third of ackWaitMs), and a message's ack wait starts
   * again when its handler starts. On stop, queued messages are released (nak) for another consumer
   * at once, and those in flight finish. `spare` slots (default 0) beyond `concurrency` go only to a
   * key with nothing running: a newcomer's job starts at once instead of waiting for one of a busy
   * key's long jobs to end, while a key that already runs something never takes them.
   */
  async consumeFairly<S extends RegisteredStream<M>>(
    spec: S,
    handler: MessageHandler<StreamMessage<S, M>>,
    opts: FairOptions<StreamMessage<S, M>>,
  ): Promise<Consumption> {
    const ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    return this.consumeFair(spec, opts, 1, ([m]) => this.handleOne(spec, handler, m, ackWaitMs));
  }

  /**
   * As consumeFairly, but each slot takes a batch: up to `maxBatch` (default 20) queued messages of
   * one key, handled together as consume's batches are (one handler call, outcomes per message). A
   * key's backlog still runs in batches as large as consume's, and another key's few messages get
   * the next free slot, or a spare one, instead of waiting behind that backlog in stream order.
   */
  async consumeFairlyInBatches<S extends RegisteredStream<M>>(
    spec: S,
    handler: BatchHandler<StreamMessage<S, M>>,
    opts: FairOptions<StreamMessage<S, M>> & { maxBatch?: number },
  ): Promise<Consumption> {
    const ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    return this.consumeFair(spec, opts, opts.maxBatch ?? 20, (batch) =>
      this.handleBatch(spec, handler, batch, ackWaitMs),
    );
  }

  /** consumeFairly's machinery: `run` handles (and settles) each batch of up to `maxBatch` messages of one key. */
  private async consumeFair<S extends RegisteredStream<M>>(
    spec: S,
    opts: FairOptions<StreamMessage<S, M>>,
    maxBatch: number,
    run: (batch: JsMsg[]) => Promise<void>,
  ): Promise<Consumption> {
    const concurrency = opts.concurrency ?? 16;
    const slots = concurrency + Math.max(0, opts.spare ?? 0);
    const ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    const window = Math.max(slots * maxBatch, opts.window ?? DEFAULT_FAIR_WINDOW);
    // Pulls of a quarter window at least, unless the slots are about to run dry: fewer round trips.
    const refill = Math.max(1, Math.floor(window / 4));
    const consumer = await this.openConsumer(spec, ackWaitMs);
    const queues = new FairQueues<JsMsg>();
    const inFlight = new Set<Promise<void>>();
    /** Messages in the batches in flight. */
    let handling = 0;
    let stopping = false;

    const pump = () => {
      while (!stopping && inFlight.size < slots) {
        const taken = queues.nextBatch(maxBatch, { idleOnly: inFlight.size >= concurrency });
        if (!taken) return;
        const { key, items } = taken;
        handling += items.length;
        for (const m of items) m.working(); // its handler gets a whole ack wait, however long it was queued
        const work: Promise<void> = run(items)
          .catch((err: unknown) =>
            this.logger.error({ err, seq: items.map((m) => m.seq) }, 'could not settle job messages'),
          )
          .finally(() => {
            queues.finished(key);
            handling -= items.length;
            inFlight.delete(work);
            puller.roomFreed();
            pump();
          });
        inFlight.add(work);
      }
    };
    // Poison has no key; it gets a queue of its own, and handleOne dead-letters it.
    const keyOf = (m: JsMsg): string | symbol => {
      const item = this.failures.peek<StreamMessage<S, M>>(spec, m);
      return item === undefined ? POISON : opts.key(item);
    };
    const keepAlive = keepBeating((each) => queues.forEach(each), ackWaitMs);

    const puller = new PullLoop(consumer, {
      // Room in the window, once there is enough for a pull: every message pulled goes straight into
      // the queues, where keepAlive covers it.
      room: () => {
        const free = window - queues.size - handling;
        return free <= 0 || (free < refill && queues.size >= concurrency * maxBatch) ? 0 : free;
      },
      receive: (m) => {
        queues.push(keyOf(m), m);
        pump();
      },
      logger: this.logger,
      stream: this.streamName(spec),
      isClosed: () => this.nc.isClosed(),
    });

    return {
      async stop() {
        stopping = true;
        await puller.stop();
        clearInterval(keepAlive);
        for (let taken = queues.next(); taken; taken = queues.next()) taken.item.nak();
        await Promise.allSettled([...inFlight]);
      },
    };
  }

  /** One message through its handler: acked, retried, counted as a failure or dead-lettered (see consumeEach). */
  private async handleOne<S extends RegisteredStream<M>>(
    spec: S,
    handler: MessageHandler<StreamMessage<S, M>>,
    m: JsMsg,
    ackWaitMs: number,
  ): Promise<void> {
    const stream = this.streamName(spec);
    // A failed message's retry copy arrived before its backoff ended: waiting is not a failure.
    const wait = JobFailures.waitMs(m);
    if (wait > 0) return m.nak(wait);
    const { span, context: spanContext } = this.startConsumerSpan(spec, m);
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
  private async handleBatch<S extends RegisteredStream<M>>(
    spec: S,
    handler: BatchHandler<StreamMessage<S, M>>,
    batch: JsMsg[],
    ackWaitMs: number,
  ): Promise<void> {
    const stream = this.streamName(spec);
    const items: StreamMessage<S, M>[] = [];
    const good: JsMsg[] = [];
    // One span per message, in its producer's trace; the batch's work runs in a span that links them.
    const spans: Array<{ span: Span; context: Context }> = [];
    for (const m of batch) {
      const consumed = this.startConsumerSpan(spec, m);
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
        attributes: this.attributes(spec, 'process', 'consume', {
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

  /**
   * The durable consumer the provisioner made (only got: a service may not add or change one; the get
   * is a CONSUMER.INFO). Its ack wait must be at least `ackWaitMs`, the one heartbeats are sent for:
   * a shorter one would hand a working message to another instance between two heartbeats.
   */
  private async openConsumer(spec: StreamSpec, ackWaitMs: number): Promise<Consumer> {
    const stream = this.streamName(spec);
    const name = `${stream}/${spec.consumer}`;
    // At start: tried again while the cluster is not ready.
    const consumer = await retryTransient(
      `consumer ${name}`,
      () =>
        this.jetstream()
          .consumers.get(stream, spec.consumer)
          .catch((err: unknown) => {
            if (!/not found/i.test((err as Error)?.message ?? '')) throw err;
            throw new BusTopologyError(spec.consumer, this.prefix, [{ kind: 'consumer', name, problem: 'missing' }]);
          }),
      { logger: this.logger },
    );
    // JetStream's default when a consumer was added without one: 30 s.
    const serverAckWait = (await consumer.info(true)).config.ack_wait ?? nanos(30_000);
    if (serverAckWait < nanos(ackWaitMs))
      throw new BusTopologyError(spec.consumer, this.prefix, [
        {
          kind: 'consumer',
          name,
          problem: 'shorter ack wait',
          have: `${serverAckWait / nanos(1)} ms`,
          want: `${ackWaitMs} ms`,
        },
      ]);
    return consumer;
  }

  async consume<S extends RegisteredStream<M>>(
    spec: S,
    handler: BatchHandler<StreamMessage<S, M>>,
    opts: { maxBatch?: number; ackWaitMs?: number } = {},
  ): Promise<Consumption> {
    const stream = this.streamName(spec);
    const ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    const consumer = await this.openConsumer(spec, ackWaitMs);
    const maxBatch = opts.maxBatch ?? 500;
    // Held at once: the batch being handled and the next one filling; pulled again once a quarter batch is free.
    const window = 2 * maxBatch;
    const refill = Math.max(1, Math.floor(maxBatch / 4));
    const pending: JsMsg[] = [];
    let handling = 0;
    let flushing: Promise<void> | undefined;

    const flush = async () => {
      while (pending.length > 0) {
        const batch = pending.splice(0, maxBatch);
        handling = batch.length;
        try {
          await this.handleBatch(spec, handler, batch, ackWaitMs);
        } finally {
          handling = 0;
          puller.roomFreed();
        }
      }
    };

    // A message pushed after flush() saw `pending` empty but before its end cleared `flushing` would
    // wait for the next message: a flush that ends with messages pending starts the next one.
    const kick = (): void => {
      flushing ??= flush().finally(() => {
        flushing = undefined;
        if (pending.length > 0) kick();
      });
    };
    // Messages waiting for their batch are kept from redelivery with in-progress acks; the batch in
    // hand has its own (whileBeating).
    const keepAlive = keepBeating((each) => pending.forEach(each), ackWaitMs);
    const puller = new PullLoop(consumer, {
      room: () => {
        const free = window - pending.length - handling;
        return free >= refill || (pending.length === 0 && handling === 0) ? free : 0;
      },
      receive: (m) => {
        pending.push(m);
        kick();
      },
      logger: this.logger,
      stream,
      isClosed: () => this.nc.isClosed(),
    });

    return {
      async stop() {
        // What was pulled is still handled (and acked) before stop resolves.
        await puller.stop();
        while (flushing) await flushing;
        clearInterval(keepAlive);
      },
    };
  }
}
