import { MicroBatcher, type ItemOutcome } from '../src';

function gate(): { opened: Promise<void>; open(): void } {
  let open = () => undefined as void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('MicroBatcher', () => {
  it('runs a lone item at once, in a batch of its own', async () => {
    const batches: number[][] = [];
    const batcher = new MicroBatcher<number, number>({
      maxItems: 10,
      maxRunning: 1,
      run: async (items) => {
        batches.push(items);
        return items.map((n) => ({ ok: true, value: n * 2 }));
      },
    });
    await expect(batcher.submit(21)).resolves.toBe(42);
    expect(batches).toEqual([[21]]);
  });

  it('gathers what arrives while the slots are busy into the next batch, at most maxItems each', async () => {
    const batches: number[][] = [];
    const first = gate();
    const batcher = new MicroBatcher<number, string>({
      maxItems: 3,
      maxRunning: 1,
      run: async (items) => {
        batches.push(items);
        if (batches.length === 1) await first.opened;
        return items.map((n) => ({ ok: true, value: `#${n}` }));
      },
    });
    const answers = [1, 2, 3, 4, 5, 6].map((n) => batcher.submit(n));
    expect(batcher.waiting).toBe(5);
    first.open();
    await expect(Promise.all(answers)).resolves.toEqual(['#1', '#2', '#3', '#4', '#5', '#6']);
    expect(batches).toEqual([[1], [2, 3, 4], [5, 6]]);
  });

  it('runs up to maxRunning batches at once', async () => {
    let running = 0;
    let most = 0;
    const release = gate();
    const batcher = new MicroBatcher<number, number>({
      maxItems: 1,
      maxRunning: 3,
      run: async (items) => {
        running += 1;
        most = Math.max(most, running);
        await release.opened;
        running -= 1;
        return items.map((n) => ({ ok: true, value: n }));
      },
    });
    const answers = Array.from({ length: 7 }, (_, n) => batcher.submit(n));
    await new Promise((resolve) => setImmediate(resolve));
    expect(running).toBe(3);
    release.open();
    await Promise.all(answers);
    expect(most).toBe(3);
  });

  it('fails only the item whose outcome is an error, and every item when the batch throws', async () => {
    const batcher = new MicroBatcher<number, number>({
      maxItems: 10,
      maxRunning: 1,
      run: async (items) => {
        if (items.includes(0)) throw new Error('the batch failed');
        return items.map((n): ItemOutcome<number> =>
          n < 0 ? { ok: false, error: new Error(`bad ${n}`) } : { ok: true, value: n },
        );
      },
    });
    const hold = batcher.submit(1);
    const mixed = [batcher.submit(2), batcher.submit(-3), batcher.submit(4)];
    await hold;
    await expect(mixed[0]).resolves.toBe(2);
    await expect(mixed[1]).rejects.toThrow('bad -3');
    await expect(mixed[2]).resolves.toBe(4);
    await expect(batcher.submit(0)).rejects.toThrow('the batch failed');
  });

  it('rejects an item the batch left without an answer', async () => {
    const batcher = new MicroBatcher<number, number>({ maxItems: 5, maxRunning: 1, run: async () => [] });
    await expect(batcher.submit(1)).rejects.toThrow('answered 0 of 1');
  });
});
