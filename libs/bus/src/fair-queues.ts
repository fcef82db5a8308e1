/**
 * One FIFO queue per key, and turns across the keys that have something queued: the next item is the
 * oldest of the key with the fewest items running (ties: the key whose turn came longest ago). A key
 * with a thousand items and a key with one share the running slots equally, each in its own order.
 * next({ idleOnly: true }) takes only from a key with nothing running: a consumer whose slots are all
 * busy can still start a newcomer's item in a spare slot, without letting a busy key take that slot.
 */
export class FairQueues<T> {
  private readonly queues = new Map<string | symbol, T[]>();
  /** Keys with something queued, in the order of their next turn. */
  private readonly turns: Array<string | symbol> = [];
  /** Items taken and not yet finished, per key. */
  private readonly running = new Map<string | symbol, number>();
  private count = 0;

  /** Items queued, over every key. */
  get size(): number {
    return this.count;
  }

  push(key: string | symbol, item: T): void {
    const queue = this.queues.get(key);
    if (queue) queue.push(item);
    else {
      this.queues.set(key, [item]);
      this.turns.push(key);
    }
    this.count += 1;
  }

  /**
   * The next item and its key, counted as running until finished(key); undefined when nothing is
   * queued, or with `idleOnly` when every key with something queued has something running too.
   */
  next(opts: { idleOnly?: boolean } = {}): { key: string | symbol; item: T } | undefined {
    const taken = this.nextBatch(1, opts);
    return taken && { key: taken.key, item: taken.items[0] };
  }

  /**
   * As next, but up to `max` items of the chosen key, oldest first, counted as one running until
   * finished(key): a key's batch takes one turn and one slot, as a lone item does.
   */
  nextBatch(max: number, opts: { idleOnly?: boolean } = {}): { key: string | symbol; items: T[] } | undefined {
    if (this.turns.length === 0) return undefined;
    let turn = 0;
    for (let i = 1; i < this.turns.length; i++)
      if (this.runningOf(this.turns[i]) < this.runningOf(this.turns[turn])) turn = i;
    if (opts.idleOnly && this.runningOf(this.turns[turn]) > 0) return undefined;
    const [key] = this.turns.splice(turn, 1);
    const queue = this.queues.get(key) ?? [];
    const items = queue.splice(0, Math.max(1, max));
    if (queue.length > 0) this.turns.push(key);
    else this.queues.delete(key);
    this.count -= items.length;
    this.running.set(key, this.runningOf(key) + 1);
    return { key, items };
  }

  /** An item of `key` taken with next() has finished. */
  finished(key: string | symbol): void {
    const n = this.runningOf(key) - 1;
    if (n > 0) this.running.set(key, n);
    else this.running.delete(key);
  }

  forEach(visit: (item: T) => void): void {
    for (const queue of this.queues.values()) queue.forEach(visit);
  }

  private runningOf(key: string | symbol): number {
    return this.running.get(key) ?? 0;
  }
}
