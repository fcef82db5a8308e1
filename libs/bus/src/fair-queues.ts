/**
 * One FIFO queue per key, taken round-robin across the keys that have something queued: a key with
 * a thousand items and a key with one take turns, each in its own order.
 */
export class FairQueues<T> {
  private readonly queues = new Map<string | symbol, T[]>();
  /** Keys with something queued, in the order of their next turn. */
  private readonly turns: Array<string | symbol> = [];
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

  /** The next key's oldest item (that key goes to the back of the turns), or undefined when empty. */
  next(): T | undefined {
    const key = this.turns.shift();
    if (key === undefined) return undefined;
    const queue = this.queues.get(key)!;
    const item = queue.shift()!;
    if (queue.length > 0) this.turns.push(key);
    else this.queues.delete(key);
    this.count -= 1;
    return item;
  }

  forEach(visit: (item: T) => void): void {
    for (const queue of this.queues.values()) queue.forEach(visit);
  }
}
