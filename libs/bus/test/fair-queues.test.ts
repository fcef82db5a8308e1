import { FairQueues } from '../src/fair-queues';

/**
 * FairQueues as its comments state it. next(): the key with the fewest running, ties to the
 * longest-waiting turn, each key in its own order. nextBatch: up to `max` items of the chosen key,
 * oldest first; a batch counts as one running until one finished(key), so it takes one turn and one
 * slot. With `idleOnly` only a key with nothing running is taken.
 */

/** A queue holding `count` items of each key given, pushed key by key: `a0`, `a1`, ..., `b0`, ... */
function queuesOf(counts: Record<string, number>): FairQueues<string> {
  const queues = new FairQueues<string>();
  for (const [key, count] of Object.entries(counts)) for (let n = 0; n < count; n++) queues.push(key, `${key}${n}`);
  return queues;
}

const items = (key: string, from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `${key}${from + i}`);

it('takes up to max items of one key, oldest first, and fewer when fewer are queued', () => {
  const queues = queuesOf({ a: 7 });
  expect(queues.nextBatch(3)).toEqual({ key: 'a', items: items('a', 0, 3) });
  expect(queues.size).toBe(4);
  expect(queues.nextBatch(3)).toEqual({ key: 'a', items: items('a', 3, 6) });
  expect(queues.nextBatch(3)).toEqual({ key: 'a', items: ['a6'] });
  expect(queues.size).toBe(0);
  expect(queues.nextBatch(3)).toBeUndefined();
});

it('never puts two keys in one batch, however the items were pushed', () => {
  const queues = new FairQueues<string>();
  for (let n = 0; n < 4; n++) for (const key of ['a', 'b', 'c']) queues.push(key, `${key}${n}`);
  const batches: string[][] = [];
  for (let taken = queues.nextBatch(3); taken; taken = queues.nextBatch(3)) {
    batches.push(taken.items);
    queues.finished(taken.key);
  }
  for (const batch of batches) expect(new Set(batch.map((item) => item[0])).size).toBe(1);
  expect(batches.flat().sort()).toEqual([...items('a', 0, 4), ...items('b', 0, 4), ...items('c', 0, 4)]);
});

it('keys take turns: a batch is one running item, so a long backlog takes one turn per batch', () => {
  const queues = queuesOf({ a: 10, b: 3, c: 1 });
  // Nothing runs: turns in order of arrival, one batch each.
  expect(queues.nextBatch(4)).toEqual({ key: 'a', items: items('a', 0, 4) });
  expect(queues.nextBatch(4)).toEqual({ key: 'b', items: items('b', 0, 3) });
  expect(queues.nextBatch(4)).toEqual({ key: 'c', items: ['c0'] });
  // Each runs one batch; only a has more: its next batch, then one after it.
  expect(queues.nextBatch(4)).toEqual({ key: 'a', items: items('a', 4, 8) });
  queues.push('b', 'b3');
  // a runs two batches, b one: b goes first.
  expect(queues.nextBatch(4)).toEqual({ key: 'b', items: ['b3'] });
  expect(queues.nextBatch(4)).toEqual({ key: 'a', items: items('a', 8, 10) });
  expect(queues.size).toBe(0);
});

it('a newcomer gets the first slot a backlog frees, not after the backlog', () => {
  const queues = queuesOf({ a: 40 });
  // Two slots, both running a's batches.
  const running = [queues.nextBatch(5), queues.nextBatch(5)];
  expect(running.map((t) => t?.items)).toEqual([items('a', 0, 5), items('a', 5, 10)]);
  queues.push('b', 'b0');
  // One finished(key) frees a whole batch's slot: b runs nothing, a one batch.
  queues.finished('a');
  expect(queues.nextBatch(5)).toEqual({ key: 'b', items: ['b0'] });
  queues.finished('a');
  expect(queues.nextBatch(5)).toEqual({ key: 'a', items: items('a', 10, 15) });
});

it('ties go to the key whose turn came longest ago: a key back from empty queues behind the waiting ones', () => {
  const queues = queuesOf({ a: 2 });
  const first = queues.nextBatch(5);
  expect(first?.items).toEqual(['a0', 'a1']);
  queues.push('b', 'b0');
  queues.push('a', 'a2');
  queues.finished('a');
  // a and b run nothing; b was waiting first.
  expect(queues.nextBatch(5)?.items).toEqual(['b0']);
  expect(queues.nextBatch(5)?.items).toEqual(['a2']);
});

it('with idleOnly takes a batch only of a key with nothing running (the spare slot)', () => {
  const queues = queuesOf({ a: 12 });
  expect(queues.nextBatch(4)?.items).toEqual(items('a', 0, 4));
  // a runs a batch and is the only key queued: nothing for a spare slot.
  expect(queues.nextBatch(4, { idleOnly: true })).toBeUndefined();
  expect(queues.size).toBe(8);
  queues.push('b', 'b0');
  queues.push('b', 'b1');
  expect(queues.nextBatch(4, { idleOnly: true })).toEqual({ key: 'b', items: ['b0', 'b1'] });
  // Both run a batch now.
  expect(queues.nextBatch(4, { idleOnly: true })).toBeUndefined();
  queues.finished('a');
  expect(queues.nextBatch(4, { idleOnly: true })).toEqual({ key: 'a', items: items('a', 4, 8) });
});

it('next() stays a batch of one', () => {
  const queues = queuesOf({ a: 3, b: 1 });
  expect(queues.next()).toEqual({ key: 'a', item: 'a0' });
  expect(queues.next()).toEqual({ key: 'b', item: 'b0' });
  expect(queues.next()).toEqual({ key: 'a', item: 'a1' });
  expect(queues.size).toBe(1);
});

it('the next item is of the key with the fewest running, each key in its own order', () => {
  const queues = new FairQueues<string>();
  for (const item of ['a1', 'a2', 'a3', 'a4', 'b1', 'c1', 'b2']) queues.push(item[0], item);
  expect(queues.size).toBe(7);
  const take = () => queues.next()?.item;
  // Nothing runs: turns in order of arrival.
  expect([take(), take(), take()]).toEqual(['a1', 'b1', 'c1']);
  // One each running: a, b, then a again (c has nothing queued).
  expect([take(), take()]).toEqual(['a2', 'b2']);
  // a has two running, b two, c one: c has nothing queued, a goes on.
  expect(take()).toBe('a3');
  queues.push('c', 'c2');
  expect(take()).toBe('c2'); // c runs 1, a 3: c first
  queues.finished('a');
  queues.finished('a');
  expect(take()).toBe('a4');
  expect(take()).toBeUndefined();
  expect(queues.size).toBe(0);
});

it('next({ idleOnly }) takes only from a key with nothing running', () => {
  const queues = new FairQueues<string>();
  for (const item of ['a1', 'a2', 'a3']) queues.push('a', item);
  expect(queues.next()?.item).toBe('a1');
  // a runs one and is the only key queued: nothing for a spare slot.
  expect(queues.next({ idleOnly: true })).toBeUndefined();
  expect(queues.size).toBe(2);
  queues.push('b', 'b1');
  queues.push('b', 'b2');
  expect(queues.next({ idleOnly: true })?.item).toBe('b1');
  // b runs one now too.
  expect(queues.next({ idleOnly: true })).toBeUndefined();
  queues.finished('a');
  expect(queues.next({ idleOnly: true })?.item).toBe('a2');
  expect(queues.next()?.item).toBe('b2');
});

it('a key that arrives while another holds every slot gets the next free one', () => {
  const queues = new FairQueues<string>();
  for (let n = 0; n < 10; n++) queues.push('a', `a${n}`);
  const running = [queues.next()!, queues.next()!, queues.next()!, queues.next()!];
  expect(running.map((t) => t.item)).toEqual(['a0', 'a1', 'a2', 'a3']);
  queues.push('b', 'b0');
  queues.push('b', 'b1');
  queues.finished('a');
  expect(queues.next()?.item).toBe('b0');
  queues.finished('a');
  expect(queues.next()?.item).toBe('b1'); // b runs 1, a 2
  queues.finished('a');
  expect(queues.next()?.item).toBe('a4');
});
