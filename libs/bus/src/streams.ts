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

export type BatchHandler<T> = (items: T[]) => Promise<void>;

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

  async consume<T>(spec: StreamSpec, handler: BatchHandler<T>, opts: { maxBatch?: number; ackWaitMs?: number } = {}): Promise<Consumption> {
    const stream = this.streamName(spec);
    const jsm = await this.nc.jetstreamManager();
    await jsm.consumers.add(stream, {
      durable_name: spec.consumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(opts.ackWaitMs ?? 30_000),
      max_ack_pending: 20_000,
    });
    const consumer = await this.nc.jetstream().consumers.get(stream, spec.consumer);
    const messages: ConsumerMessages = await consumer.consume({ max_messages: 1_000 });
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
          await handler(items);
          for (const m of good) m.ack();
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
