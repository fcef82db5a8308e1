import { doublingDelayMs } from '@payments/backoff';
import type { Logger } from '@payments/logger';
import type { DeliveryTracing } from './delivery-tracing';
import type { AttemptResult, EventStore } from './event-store';

export interface AttemptRecorderConfig {
  /** Where attempts are written, each with its event's next state. */
  readonly store: EventStore;
  readonly logger: Logger;
  /** Runs each write outside the trace of the attempt that started it. */
  readonly tracing: Pick<DeliveryTracing, 'detached'>;
  /** Most attempts written in one transaction. Default: 500. */
  readonly maxBatch?: number;
  /**
   * Asked after a write failed: true once trying again is pointless (the worker is stopping and its
   * grace is over); its attempts are then left unwritten. Default: never.
   */
  readonly giveUp?: () => boolean;
}

/**
 * Pause before trying a failed bookkeeping write again: short (100 ms doubling to 1 s), because the
 * claims it concerns stay this worker's while its heartbeat runs, and nothing else frees them before
 * their row lease (CALLBACK_TIMEOUT_MS + 50 s) ends: the sooner it lands after Postgres is back, the
 * sooner they move on. One statement per try whatever the count, so a long outage costs little.
 */
export function bookkeepingRetryDelayMs(attempt: number): number {
  return doublingDelayMs(attempt + 1, { firstMs: 50, maxMs: 1_000 });
}

/** Failed tries of one write logged: the first, then one in this many (about every 20 s at 1 s apart). */
export const LOG_EVERY_NTH_FAILURE = 20;

/**
 * Runs `write` until it succeeds, pausing bookkeepingRetryDelayMs between tries, or until `giveUp()`
 * says so after a failure (then undefined). `onFailure` hears of each failed try.
 */
export async function retryWrite<T>(
  write: () => Promise<T>,
  giveUp: () => boolean,
  onFailure: (err: unknown, attempt: number) => void,
): Promise<{ value: T } | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return { value: await write() };
    } catch (err) {
      onFailure(err, attempt);
      if (giveUp()) return undefined;
      await new Promise((r) => setTimeout(r, bookkeepingRetryDelayMs(attempt)));
    }
  }
}

/**
 * What became of a recorded attempt: written with its event's next state; `stale` when the event's
 * lease had passed to a later claim (or the event was settled), so its outcome was left out; `unwritten`
 * when the worker stopped while Postgres was away (the claim ends with the worker's lease and the
 * event is attempted again).
 */
export type RecordedAs = 'written' | 'stale' | 'unwritten';

/**
 * Writes finished attempts in batches: whatever finished while the previous write ran goes in the
 * next one. Under load that turns thousands of small transactions into a few large ones; when idle,
 * an attempt is written at once. While Postgres is away a batch is tried again until it answers (each
 * outcome is fenced by its claim's lease token, so a late write never overrides a later claim); only
 * a stopping worker gives up. If the process dies before a write, the event's claim ends with the
 * worker's lease and it is attempted again (at least once, as promised).
 */
export class AttemptRecorder {
  private buffer: Array<{ result: AttemptResult; done: (as: RecordedAs) => void }> = [];
  private writing: Promise<void> | undefined;
  private readonly store: EventStore;
  private readonly logger: Logger;
  private readonly tracing: Pick<DeliveryTracing, 'detached'>;
  private readonly maxBatch: number;
  private readonly giveUp: () => boolean;

  constructor(config: AttemptRecorderConfig) {
    this.store = config.store;
    this.logger = config.logger;
    this.tracing = config.tracing;
    this.maxBatch = config.maxBatch ?? 500;
    this.giveUp = config.giveUp ?? (() => false);
  }

  record(result: AttemptResult): Promise<RecordedAs> {
    return new Promise((resolve) => {
      this.buffer.push({ result, done: resolve });
      // Detached: one write holds attempts of many traces; it must not join the first one's.
      this.writing ??= this.tracing.detached(() =>
        this.drain().finally(() => {
          this.writing = undefined;
        }),
      );
    });
  }

  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.maxBatch);
      // Postgres away: keep the results and try again; the claims hold meanwhile.
      const written = await retryWrite(
        () => this.store.recordAttempts(batch.map((b) => b.result)),
        this.giveUp,
        (err, attempt) => {
          if (attempt % LOG_EVERY_NTH_FAILURE === 1)
            this.logger.error({ err, count: batch.length, attempt }, 'could not record attempts; retrying');
        },
      );
      if (!written)
        this.logger.warn({ count: batch.length }, 'attempts left unwritten on stop; they end with the worker lease');
      const stale = new Set(written?.value.stale);
      for (const b of batch) b.done(written === undefined ? 'unwritten' : stale.has(b.result) ? 'stale' : 'written');
    }
  }
}
