/** What became of a request given to ServeSlots.run. */
export type SlotOutcome = 'ran' | 'busy' | 'expired';

/**
 * Bounds the request handlers a service runs at once (BUS_SERVE_CONCURRENCY). A request that finds
 * every slot taken waits, in arrival order, in a queue of at most `maxWaiting`; a fuller queue answers
 * `busy` at once (the asker gets a 503 and retries), and a request whose asker has stopped waiting
 * (its deadline passed) is never started: nobody reads its answer, and a work the asker believes
 * failed must not commit behind its back long after.
 */
export class ServeSlots {
  private running = 0;
  private readonly waiting: Array<{ deadline: number; resolve: (started: boolean) => void }> = [];

  constructor(
    private readonly limit: number,
    private readonly maxWaiting = limit * 4,
    private readonly now: () => number = Date.now,
  ) {}

  /** Handlers running now. */
  get size(): number {
    return this.running;
  }

  async run(deadline: number, work: () => Promise<void>): Promise<SlotOutcome> {
    if (this.now() > deadline) return 'expired';
    if (this.running < this.limit) this.running += 1;
    else {
      if (this.waiting.length >= this.maxWaiting) return 'busy';
      // The slot is handed over already counted (see release): no arrival can slip in between.
      const started = await new Promise<boolean>((resolve) => this.waiting.push({ deadline, resolve }));
      if (!started) return 'expired';
    }
    try {
      await work();
    } finally {
      this.release();
    }
    return 'ran';
  }

  private release(): void {
    for (let next = this.waiting.shift(); next; next = this.waiting.shift()) {
      if (this.now() > next.deadline) next.resolve(false);
      else return next.resolve(true); // the slot passes on, still counted
    }
    this.running -= 1;
  }
}
