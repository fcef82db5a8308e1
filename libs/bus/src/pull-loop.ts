import type { Consumer, ConsumerMessages, JsMsg } from 'nats';
import type { Logger } from '@payments/logger';
import { doublingDelayMs } from '@payments/backoff';

/**
 * How long a pull request lives. Short: after a crash (kill -9) the server may still hold the dead
 * client's pull request, and messages it takes wait for ack_wait before redelivery; expiring pulls bound that.
 */
const PULL_EXPIRES_MS = 5_000;

export interface PullLoopOptions {
  /**
   * How many messages to ask for now, or 0 to wait until `roomFreed()`. The owner keeps every message
   * it receives alive (in-progress acks) until it is settled, so this is the room it has for more.
   */
  room: () => number;
  /** Takes each message pulled; it is the owner's from then on. */
  receive: (m: JsMsg) => void;
  logger: Logger;
  /** The stream, for log lines. */
  stream: string;
  /** Whether the connection is closed: then the loop ends instead of pulling again. */
  isClosed: () => boolean;
}

/**
 * Pulls messages on demand: each pull (a fetch, expiring after PULL_EXPIRES_MS) asks for at most the
 * room its owner has, so every message received is in the owner's hands at once. Messages left
 * unread in the client's buffer (consume()'s prefetch) had no in-progress ack and came back after
 * the ack wait while this instance still held them: the work was done twice.
 */
export class PullLoop {
  private stopping = false;
  private pull: ConsumerMessages | undefined;
  private roomWaiter: (() => void) | undefined;
  private napWaiter: (() => void) | undefined;
  private readonly done: Promise<void>;

  constructor(
    private readonly consumer: Consumer,
    private readonly opts: PullLoopOptions,
  ) {
    this.done = this.run();
  }

  /** Tells a loop waiting for room that some was freed. */
  roomFreed(): void {
    const wake = this.roomWaiter;
    this.roomWaiter = undefined;
    wake?.();
  }

  /** Stops pulling; messages a pull still brings are released (nak) for another consumer. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.roomFreed();
    this.napWaiter?.();
    // Ends the pull being read (the loop naks what it still brings); not awaited: only reading settles it.
    void this.pull?.close().catch(() => undefined);
    await this.done.catch(() => undefined);
  }

  private async run(): Promise<void> {
    let failures = 0;
    for (let max = await this.nextRoom(); !this.stopping; max = await this.nextRoom()) {
      try {
        const pull = await this.consumer.fetch({ max_messages: max, expires: PULL_EXPIRES_MS });
        this.pull = pull;
        if (this.stopping) {
          // Not iterated yet, so its pull was not sent: closing frees its subscription and timers.
          void pull.close();
          break;
        }
        const began = Date.now();
        let received = 0;
        for await (const m of pull) {
          received += 1;
          if (this.stopping) m.nak();
          else this.opts.receive(m);
        }
        failures = 0;
        // A pull that ends at once with nothing (the server refusing it) must not turn into a busy loop.
        if (received === 0 && Date.now() - began < 1_000) await this.nap(250);
      } catch (err) {
        // The stream's leader moving, JetStream not up yet, a reconnect: pulled again shortly.
        if (this.stopping || this.opts.isClosed()) break;
        failures += 1;
        this.opts.logger.warn({ err, stream: this.opts.stream, failures }, 'a pull for messages failed; pulling again');
        await this.nap(doublingDelayMs(failures, { firstMs: 250, maxMs: 5_000 }));
      } finally {
        this.pull = undefined;
      }
    }
  }

  /** The room for the next pull, once there is some (0 when stopping). */
  private async nextRoom(): Promise<number> {
    for (let room = this.opts.room(); !this.stopping; room = this.opts.room()) {
      if (room > 0) return room;
      await new Promise<void>((resolve) => (this.roomWaiter = resolve));
    }
    return 0;
  }

  private nap(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.napWaiter = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
