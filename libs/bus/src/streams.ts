import {
  AckPolicy,
  DeliverPolicy,
  JSONCodec,
  nanos,
  RetentionPolicy,
  StorageType,
  type ConsumerMessages,
  type JsMsg,
  type NatsConnection,
} from 'nats';
import type { StreamSpec } from '@payments/contracts';
import type { Logger } from '@payments/logger';

const codec = JSONCodec<unknown>();

/**
 * Handles a batch; may return one outcome per item (same order) to retry some of them. Returning
 * nothing acks them all; throwing retries them all after a second.
 */
export type BatchHandler<T> = (items: T[], info: { deliveryCounts: number[] }) => Promise<void | MessageOutcome[]>;

/** What became of one message: done (ack), or try again later (redelivered after the delay). */
export type MessageOutcome = 'done' | { retryInMs: number };
/** deliveryCount is 1 on the first delivery. */
export type MessageHandler<T> = (item: T, info: { deliveryCount: number }) => Promise<MessageOutcome>;

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
export class DurableStreams {
  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {}

  streamName(spec: StreamSpec): string {
    return `${this.prefix}_${spec.name}`;
  }

  subject(spec: StreamSpec): string {
    return `${this.prefix}.${spec.subject}`;
  }

  /** Creates the stream, or brings an existing one to this configuration. Safe to call from every instance. */
  async ensure(spec: StreamSpec): Promise<void> {
    const jsm = await this.nc.jetstreamManager();
    const config = {
      name: this.streamName(spec),
      subjects: [this.subject(spec)],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      duplicate_window: nanos(spec.duplicateWindowMs),
    };
    try {
      await jsm.streams.info(config.name);
      await jsm.streams.update(config.name, config);
    } catch (err) {
      if (!/stream not found/i.test((err as Error).message)) throw err;
      await jsm.streams.add(config).catch(async (addErr: Error) => {
        // Another instance created it in the meantime.
        if (!/already in use|exists/i.test(addErr.message)) throw addErr;
      });
    }
  }

  /** Publishes durably; resolves once the stream has stored it. `duplicate` is true when the id was seen. */
  async publish(spec: StreamSpec, payload: unknown, msgId: string): Promise<{ duplicate: boolean }> {
    const js = this.nc.jetstream();
    const ack = await js.publish(this.subject(spec), codec.encode(payload), { msgID: msgId, expect: { streamName: this.streamName(spec) } });
    return { duplicate: ack.duplicate };
  }

  /**
   * Handles messages one by one, up to `concurrency` at once, each acked or retried on its own
   * outcome. A handler that throws has its message retried after a second.
   */
  async consumeEach<T>(spec: StreamSpec, handler: MessageHandler<T>, opts: { concurrency?: number; ackWaitMs?: number } = {}): Promise<Consumption> {
    const concurrency = opts.concurrency ?? 16;
    const messages = await this.openConsumer(spec, opts.ackWaitMs ?? 60_000, concurrency * 2);
    const inFlight = new Set<Promise<void>>();
    const stream = this.streamName(spec);

    const handle = async (m: JsMsg) => {
      let outcome: MessageOutcome;
      try {
        outcome = await handler(codec.decode(m.data) as T, { deliveryCount: m.info.redeliveryCount });
      } catch (err) {
        this.logger.error({ err, stream, seq: m.seq }, 'message handler failed; will retry');
        outcome = { retryInMs: 1_000 };
      }
      if (outcome === 'done') m.ack();
      else m.nak(outcome.retryInMs);
    };

    const loop = (async () => {
      for await (const m of messages) {
        while (inFlight.size >= concurrency) await Promise.race(inFlight);
        const work: Promise<void> = handle(m).finally(() => inFlight.delete(work));
        inFlight.add(work);
      }
    })();

    return {
      async stop() {
        await messages.close().catch(() => undefined);
        await loop.catch(() => undefined);
        await Promise.allSettled([...inFlight]);
      },
    };
  }

  private async openConsumer(spec: StreamSpec, ackWaitMs: number, maxMessages: number): Promise<ConsumerMessages> {
    const stream = this.streamName(spec);
    const jsm = await this.nc.jetstreamManager();
    await jsm.consumers.add(stream, {
      durable_name: spec.consumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(ackWaitMs),
      max_ack_pending: 20_000,
    });
    const consumer = await this.nc.jetstream().consumers.get(stream, spec.consumer);
    // Short-lived pulls: after a crash (kill -9) the server may still hold the dead client's pull
    // request, and messages it takes wait for ack_wait before redelivery; expiring pulls bound that.
    return consumer.consume({ max_messages: maxMessages, expires: 5_000 });
  }

  async consume<T>(spec: StreamSpec, handler: BatchHandler<T>, opts: { maxBatch?: number; ackWaitMs?: number } = {}): Promise<Consumption> {
    const stream = this.streamName(spec);
    const messages = await this.openConsumer(spec, opts.ackWaitMs ?? 30_000, 1_000);
    const maxBatch = opts.maxBatch ?? 500;
    const pending: JsMsg[] = [];
    let flushing: Promise<void> | undefined;

    const flush = async () => {
      while (pending.length > 0) {
        const batch = pending.splice(0, maxBatch);
        const items: T[] = [];
        const good: JsMsg[] = [];
        for (const m of batch) {
          try {
            items.push(codec.decode(m.data) as T);
            good.push(m);
          } catch (err) {
            this.logger.error({ err, stream, seq: m.seq }, 'undecodable message dropped');
            m.term();
          }
        }
        try {
          const outcomes = await handler(items, { deliveryCounts: good.map((m) => m.info.redeliveryCount) });
          good.forEach((m, i) => {
            const outcome = outcomes?.[i] ?? 'done';
            if (outcome === 'done') m.ack();
            else m.nak(outcome.retryInMs);
          });
        } catch (err) {
          this.logger.error({ err, stream, count: good.length }, 'batch handler failed; messages will be redelivered');
          for (const m of good) m.nak(1_000);
        }
      }
    };

    const loop = (async () => {
      for await (const m of messages) {
        pending.push(m);
        flushing ??= flush().finally(() => {
          flushing = undefined;
        });
      }
    })();

    return {
      async stop() {
        await messages.close().catch(() => undefined);
        await loop.catch(() => undefined);
        while (flushing) await flushing;
      },
    };
  }
}
