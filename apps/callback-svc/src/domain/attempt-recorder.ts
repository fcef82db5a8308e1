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
}

/**
 * Writes finished attempts in batches: whatever finished while the previous write ran goes in the
 * next one. Under load that turns thousands of small transactions into a few large ones; when idle,
 * an attempt is written at once. If the process dies before a write, the event's claim expires and
 * it is attempted again (at least once, as promised).
 */
/**
 * What became of a recorded attempt: written with its event's next state; `stale` when the event's
 * lease had passed to a later claim (or the event was settled), so its outcome was left out; `unwritten`
 * when Postgres stayed away (the claim expires and the event is attempted again).
 */
export type RecordedAs = 'written' | 'stale' | 'unwritten';

export class AttemptRecorder {
  private buffer: Array<{ result: AttemptResult; done: (as: RecordedAs) => void }> = [];
  private writing: Promise<void> | undefined;
  private readonly store: EventStore;
  private readonly logger: Logger;
  private readonly tracing: Pick<DeliveryTracing, 'detached'>;
  private readonly maxBatch: number;

  constructor(config: AttemptRecorderConfig) {
    this.store = config.store;
    this.logger = config.logger;
    this.tracing = config.tracing;
    this.maxBatch = config.maxBatch ?? 500;
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
      let stale: ReadonlySet<AttemptResult> | undefined;
      for (let attempt = 1; ; attempt++) {
        try {
          stale = new Set((await this.store.recordAttempts(batch.map((b) => b.result))).stale);
          break;
        } catch (err) {
          // Postgres briefly away: keep the results and try again; claims hold meanwhile.
          this.logger.error({ err, count: batch.length, attempt }, 'could not record attempts; retrying');
          await new Promise((r) => setTimeout(r, Math.min(5_000, 100 * 2 ** attempt)));
          if (attempt >= 6) break;
        }
      }
      for (const b of batch) b.done(stale === undefined ? 'unwritten' : stale.has(b.result) ? 'stale' : 'written');
    }
  }
}
