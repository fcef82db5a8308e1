import type { Consumer, JetStreamClient, JsMsg, NatsConnection } from 'nats';
import { context, type Context } from '@opentelemetry/api';
import {
  withStreamVersion,
  type BusRegistryShape,
  type BusService,
  type RegisteredStream,
  type StreamMessage,
  type StreamRegistry,
  type StreamSpec,
} from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { countWork } from '@payments/metrics';
import { MessagingAttributes } from '@payments/telemetry';
import { consumeBatchLoop, consumeFairLoop, type LoopSource } from './consume-loops';
import { openDurableConsumer } from './consumer-open';
import { DeadLetterBox } from './dead-letters';
import { DEFAULT_JOB_MAX_FAILURES, JobFailures } from './job-failures';
import type { BatchHandler, Consumption, FairOptions, MessageHandler } from './job-handlers';
import { JobRunner } from './job-runner';
import { DEFAULT_STREAM_MAX_BYTES, streamFill, type StreamFill } from './stream-limits';
import type { StreamSettings } from './stream-settings';
import { streamAttributes } from './stream-spans';
import { provisionJobStreams, type ProvisionEntry } from './provision';
import { checkTopology } from './topology-check';
import { DEFAULT_ACK_WAIT_MS } from './topology-config';
import { contextWith, failSpan, SpanKind, tracer, withTraceHeaders } from './tracing';

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
  /** Takes each pulled message (or batch) through its handler and settles it. */
  private readonly runner: JobRunner<M>;

  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly logger: Logger,
    settings: StreamSettings = {},
  ) {
    this.maxBytes = settings.streamMaxBytes ?? DEFAULT_STREAM_MAX_BYTES;
    this.replicas = settings.streamReplicas ?? 1;
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
    this.runner = new JobRunner<M>(
      this,
      this.failures,
      logger,
      settings.isOutage ?? (() => false),
      settings.jobFailureBackoffMs ?? 1_000,
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
        attributes: streamAttributes(this, spec, 'send', 'publish', {
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

  /** Where the consume loops of `spec` pull from. */
  private source(spec: StreamSpec): LoopSource {
    return { logger: this.logger, stream: this.streamName(spec), isClosed: () => this.nc.isClosed() };
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
    return this.consumeFair(spec, opts, 1, ([m]) => this.runner.handleOne(spec, handler, m, ackWaitMs));
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
      this.runner.handleBatch(spec, handler, batch, ackWaitMs),
    );
  }

  /** consumeFairly's machinery: `run` handles (and settles) each batch of up to `maxBatch` messages of one key. */
  private async consumeFair<S extends RegisteredStream<M>>(
    spec: S,
    opts: FairOptions<StreamMessage<S, M>>,
    maxBatch: number,
    run: (batch: JsMsg[]) => Promise<void>,
  ): Promise<Consumption> {
    const consumer = await this.openConsumer(spec, opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS);
    const peek = (m: JsMsg) => this.failures.peek<StreamMessage<S, M>>(spec, m);
    return consumeFairLoop(consumer, this.source(spec), opts, maxBatch, peek, run);
  }

  /**
   * The durable consumer the provisioner made (consumer-open.ts): refused with BusTopologyError when
   * it is missing or its ack wait is shorter than `ackWaitMs`.
   */
  private openConsumer(spec: StreamSpec, ackWaitMs: number): Promise<Consumer> {
    return openDurableConsumer(() => this.jetstream(), spec, {
      stream: this.streamName(spec),
      prefix: this.prefix,
      ackWaitMs,
      logger: this.logger,
    });
  }

  async consume<S extends RegisteredStream<M>>(
    spec: S,
    handler: BatchHandler<StreamMessage<S, M>>,
    opts: { maxBatch?: number; ackWaitMs?: number } = {},
  ): Promise<Consumption> {
    const ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    const consumer = await this.openConsumer(spec, ackWaitMs);
    const maxBatch = opts.maxBatch ?? 500;
    return consumeBatchLoop(consumer, this.source(spec), { maxBatch, ackWaitMs }, (batch) =>
      this.runner.handleBatch(spec, handler, batch, ackWaitMs),
    );
  }
}
