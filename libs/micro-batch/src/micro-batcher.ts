/** What one item of a batch came to: its value, or the error that is its alone. */
export type ItemOutcome<Out> = { ok: true; value: Out } | { ok: false; error: unknown };

export interface MicroBatchSettings<In, Out> {
  /**
   * Runs one batch and answers each item in order. An item's own failure is an outcome, so the others
   * go on; a throw fails every item of the batch.
   */
  run(items: In[]): Promise<Array<ItemOutcome<Out>>>;
  /** Items one batch takes at most. */
  maxItems: number;
  /** Batches running at once; items arriving meanwhile wait for the next one. */
  maxRunning: number;
}

interface Waiting<In, Out> {
  item: In;
  resolve(value: Out): void;
  reject(error: unknown): void;
}

/**
 * Coalesces concurrent calls into batches without a timer: an item that finds a batch slot free runs
 * at once (a lone request pays no wait), and items that arrive while every slot is busy go together in
 * the next batch. Under load each batch takes what gathered during the one before, so one commit or
 * one message serves many callers, and the batch size follows the load by itself.
 */
export class MicroBatcher<In, Out> {
  private readonly queue: Array<Waiting<In, Out>> = [];
  private running = 0;

  constructor(private readonly settings: MicroBatchSettings<In, Out>) {
    if (settings.maxItems < 1 || settings.maxRunning < 1)
      throw new RangeError('a micro-batch needs maxItems and maxRunning of at least 1');
  }

  /** Runs `item` in the next batch that has room, and answers its own outcome. */
  submit(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.startBatches();
    });
  }

  /** Items waiting for a batch slot. */
  get waiting(): number {
    return this.queue.length;
  }

  private startBatches(): void {
    while (this.running < this.settings.maxRunning && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.settings.maxItems);
      this.running += 1;
      void this.runBatch(batch).finally(() => {
        this.running -= 1;
        this.startBatches();
      });
    }
  }

  private async runBatch(batch: Array<Waiting<In, Out>>): Promise<void> {
    let outcomes: Array<ItemOutcome<Out>>;
    try {
      outcomes = await this.settings.run(batch.map((w) => w.item));
    } catch (error) {
      for (const w of batch) w.reject(error);
      return;
    }
    batch.forEach((w, i) => {
      const outcome = outcomes[i];
      if (outcome === undefined) w.reject(new Error(`the batch answered ${outcomes.length} of ${batch.length} items`));
      else if (outcome.ok) w.resolve(outcome.value);
      else w.reject(outcome.error);
    });
  }
}
