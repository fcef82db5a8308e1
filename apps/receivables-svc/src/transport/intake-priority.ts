/**
 * Lets background registration give way to intake. An ERP waits on intake's answer, while registration is
 * asynchronous by contract: on a busy machine a registration job that starts during a burst of intake
 * slows every POST down (same event loop, same cores, same Postgres). So a job about to start waits
 * until intake has been quiet for `quietMs`, but never longer than `maxDeferMs`: under sustained
 * intake, registration still moves, only at a lower pace. `maxDeferMs` 0 turns the gate off.
 */
export class IntakePriority {
  private inFlight = 0;
  private lastFinishedAt = 0;
  private readonly waiters = new Set<() => void>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: { maxDeferMs: number; quietMs: number }) {}

  /** Runs an intake request, marking intake as busy meanwhile. */
  async intake<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight += 1;
    try {
      return await work();
    } finally {
      this.inFlight -= 1;
      this.lastFinishedAt = Date.now();
      this.scheduleRelease();
    }
  }

  /** Resolves when intake is quiet, or after `maxDeferMs` at most. */
  giveWay(): Promise<void> {
    if (this.opts.maxDeferMs <= 0 || this.isQuiet()) return Promise.resolve();
    return new Promise((resolve) => {
      const release = () => {
        clearTimeout(deadline);
        this.waiters.delete(release);
        resolve();
      };
      const deadline = setTimeout(release, this.opts.maxDeferMs);
      this.waiters.add(release);
      this.scheduleRelease();
    });
  }

  /** Background jobs waiting for intake to calm down. */
  get waiting(): number {
    return this.waiters.size;
  }

  private isQuiet(): boolean {
    return this.inFlight === 0 && Date.now() - this.lastFinishedAt >= this.opts.quietMs;
  }

  private scheduleRelease(): void {
    if (this.timer || this.waiters.size === 0 || this.inFlight > 0) return;
    const wait = Math.max(0, this.lastFinishedAt + this.opts.quietMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.isQuiet()) for (const release of [...this.waiters]) release();
      else this.scheduleRelease();
    }, wait);
  }
}
