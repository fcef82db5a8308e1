import type { Consumer, JsMsg } from 'nats';
import type { Logger } from '@payments/logger';
import { FairQueues } from './fair-queues';
import { keepBeating } from './heartbeat';
import { DEFAULT_FAIR_WINDOW, type Consumption, type FairOptions } from './job-handlers';
import { PullLoop } from './pull-loop';
import { DEFAULT_ACK_WAIT_MS } from './topology-config';

/** The key of a message that cannot be decoded: it is dead-lettered when its turn comes. */
const POISON = Symbol('poison');

/** Where a loop pulls from: its stream's name (for logs), and whether the connection closed. */
export interface LoopSource {
  logger: Logger;
  stream: string;
  isClosed: () => boolean;
}

/**
 * consumeFairly's machinery on an opened consumer: `run` handles (and settles) each batch of up to
 * `maxBatch` messages of one key; `peek` reads a message's payload for its key, undefined for poison.
 */
export function consumeFairLoop<T>(
  consumer: Consumer,
  source: LoopSource,
  opts: FairOptions<T>,
  maxBatch: number,
  peek: (m: JsMsg) => T | undefined,
  run: (batch: JsMsg[]) => Promise<void>,
): Consumption {
  const concurrency = opts.concurrency ?? 16;
  const slots = concurrency + Math.max(0, opts.spare ?? 0);
  const ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
  const window = Math.max(slots * maxBatch, opts.window ?? DEFAULT_FAIR_WINDOW);
  // Pulls of a quarter window at least, unless the slots are about to run dry: fewer round trips.
  const refill = Math.max(1, Math.floor(window / 4));
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
          source.logger.error({ err, seq: items.map((m) => m.seq) }, 'could not settle job messages'),
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
  // Poison has no key; it gets a queue of its own, and the handling dead-letters it.
  const keyOf = (m: JsMsg): string | symbol => {
    const item = peek(m);
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
    logger: source.logger,
    stream: source.stream,
    isClosed: source.isClosed,
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

/**
 * consume's machinery on an opened consumer: batches of up to `maxBatch` messages in stream order,
 * one at a time, each through `run` (which settles it).
 */
export function consumeBatchLoop(
  consumer: Consumer,
  source: LoopSource,
  opts: { maxBatch: number; ackWaitMs: number },
  run: (batch: JsMsg[]) => Promise<void>,
): Consumption {
  const { maxBatch, ackWaitMs } = opts;
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
        await run(batch);
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
    logger: source.logger,
    stream: source.stream,
    isClosed: source.isClosed,
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
