import type { Logger } from '@payments/logger';
import { LOG_EVERY_NTH_FAILURE, retryWrite } from './attempt-recorder';
import type { ClaimedEvent } from './callback-event';
import type { DeliveryTracing } from './delivery-tracing';
import type { EventStore } from './event-store';

type Claim = Pick<ClaimedEvent, 'eventId' | 'leaseToken'>;

export interface ClaimReturnsConfig {
  readonly store: Pick<EventStore, 'release'>;
  readonly logger: Logger;
  /** Runs each write outside the trace of whatever handed the claims over. */
  readonly tracing: Pick<DeliveryTracing, 'detached'>;
  /** Asked after a write failed: true once trying again is pointless (the worker stopping, its grace over). */
  readonly giveUp: () => boolean;
  /** Most claims given back in one statement. Default: 1,000. */
  readonly maxBatch?: number;
}

/**
 * Claims this worker gives back to the queue without an attempt, due at once: events whose postpone
 * failed, held events it will not start (too little lease left, a stop, a lapse). Given back in one
 * fenced statement (EventStore.release: a claim that passed to another worker is not touched) and,
 * while Postgres is away, tried again until it answers: the worker's heartbeat keeps such a claim
 * alive, so one left behind would wait for its row lease (CALLBACK_TIMEOUT_MS + 50 s).
 */
export class ClaimReturns {
  /** By event and token: the same event may come back under two claims. */
  private readonly queue = new Map<string, { claim: Claim; done: () => void }>();
  private writing: Promise<void> | undefined;
  private readonly maxBatch: number;

  constructor(private readonly config: ClaimReturnsConfig) {
    this.maxBatch = config.maxBatch ?? 1_000;
  }

  /** Claims waiting to be given back. */
  get size(): number {
    return this.queue.size;
  }

  /** Gives the claims back; resolves once they are (or the worker gave up on stop). Never rejects. */
  giveBack(claims: readonly Claim[]): Promise<void> {
    if (claims.length === 0) return Promise.resolve();
    const done = claims.map(
      (claim) =>
        new Promise<void>((resolve) => {
          const key = `${claim.eventId} ${claim.leaseToken}`;
          const earlier = this.queue.get(key);
          this.queue.set(key, {
            claim,
            done: () => {
              earlier?.done();
              resolve();
            },
          });
        }),
    );
    // Detached: one write gives back claims handed over by many traces.
    this.writing ??= this.config.tracing.detached(() =>
      this.drain().finally(() => {
        this.writing = undefined;
      }),
    );
    return Promise.all(done).then(() => undefined);
  }

  /** Waits until nothing is left to give back (or the worker gave up). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    while (this.queue.size > 0) {
      const batch = [...this.queue].slice(0, this.maxBatch);
      for (const [key] of batch) this.queue.delete(key);
      const claims = batch.map(([, b]) => b.claim);
      const given = await retryWrite(
        () => this.config.store.release(claims),
        this.config.giveUp,
        (err, attempt) => {
          if (attempt % LOG_EVERY_NTH_FAILURE === 1)
            this.config.logger.warn({ err, count: claims.length, attempt }, 'could not give claims back; retrying');
        },
      );
      if (!given)
        this.config.logger.warn(
          { count: claims.length },
          'claims not given back on stop; they end with the worker lease',
        );
      for (const [, b] of batch) b.done();
    }
  }
}
