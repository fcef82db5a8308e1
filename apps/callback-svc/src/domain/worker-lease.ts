import { randomUUID } from 'node:crypto';
import type { Logger } from '@payments/logger';
import type { WorkerRegistry } from './worker-registry';

/** What the lease needs of the registry (WorkerRegistry; tests may pass their own). */
export type WorkerLeaseStore = Pick<WorkerRegistry, 'register' | 'renew' | 'retire'>;

export interface WorkerLeaseOptions {
  readonly store: WorkerLeaseStore;
  /** How long the lease lasts after each heartbeat (CALLBACK_LEASE_MS). */
  readonly leaseMs: number;
  readonly logger: Logger;
  /**
   * Called when the lease lapsed (heartbeats failed for `leaseMs`): the claims held may have passed to
   * other workers, so waiting events must be dropped, not started. In-flight attempts may finish:
   * their outcomes are fenced by the lease token.
   */
  readonly onLapse: () => void;
  readonly now?: () => number;
}

/**
 * This worker's lease: registered at start, renewed by a heartbeat every quarter of CALLBACK_LEASE_MS.
 * Claims are made only while the lease has more than a quarter left (so a claim never lands after the
 * row lapsed in Postgres, short of a stall that long). A lease that lapses is never revived: the
 * worker takes a new identity, and its former claims are reaped like a dead worker's.
 */
export class WorkerLease {
  private id = randomUUID();
  /** Until when the lease is known to hold: the start of the last successful heartbeat plus leaseMs. */
  private validUntil = 0;
  /** Whether `id` is registered (false after a lapse, until the new identity is). */
  private registered = false;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly options: WorkerLeaseOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The worker id to claim under, or undefined while the lease is not safely held. */
  get claimingAs(): string | undefined {
    return this.registered && this.now() < this.validUntil - this.margin ? this.id : undefined;
  }

  /** Whether held events may start: the lease has not lapsed. */
  get holds(): boolean {
    return this.registered && this.now() < this.validUntil;
  }

  /** Registers the worker and starts the heartbeat. */
  async start(): Promise<void> {
    await this.beat();
    this.schedule();
  }

  /** Stops the heartbeat and ends the lease at once, so another worker takes over what is left. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.beating;
    if (this.registered) await this.options.store.retire(this.id);
    this.registered = false;
  }

  private get margin(): number {
    return this.options.leaseMs / 4;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.beating = this.beat().finally(() => {
        this.beating = undefined;
        this.schedule();
      });
    }, this.options.leaseMs / 4);
    this.timer.unref();
  }

  /** One heartbeat: renew, or after a lapse, register anew. Never throws. */
  private async beat(): Promise<void> {
    const startedAt = this.now();
    if (this.registered && startedAt >= this.validUntil) this.lapse('heartbeats failed for the whole lease');
    try {
      if (!this.registered) {
        await this.options.store.register(this.id, this.options.leaseMs);
        this.registered = true;
      } else if (!(await this.options.store.renew(this.id, this.options.leaseMs))) {
        this.lapse('the lease had lapsed in Postgres');
        await this.options.store.register(this.id, this.options.leaseMs);
        this.registered = true;
      }
      this.validUntil = startedAt + this.options.leaseMs;
    } catch (err) {
      this.options.logger.warn({ err, workerId: this.id }, 'callback worker heartbeat failed; will retry');
    }
  }

  /** Gives up the identity: its claims are reaped as a dead worker's. */
  private lapse(reason: string): void {
    this.options.logger.warn({ workerId: this.id, reason }, 'callback worker lease lapsed; held events dropped');
    this.registered = false;
    this.validUntil = 0;
    this.id = randomUUID();
    this.options.onLapse();
  }
}
