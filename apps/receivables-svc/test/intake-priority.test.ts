import { IntakePriority } from '../src/transport/intake-priority';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function intakeFor(priority: IntakePriority, ms: number): Promise<void> {
  return priority.intake(() => sleep(ms));
}

async function giveWayTime(priority: IntakePriority): Promise<number> {
  const started = Date.now();
  await priority.giveWay();
  return Date.now() - started;
}

describe('IntakePriority', () => {
  it('lets background work start at once when there is no intake', async () => {
    const priority = new IntakePriority({ maxDeferMs: 1_000, quietMs: 100 });
    expect(await giveWayTime(priority)).toBeLessThan(20);
  });

  it('holds background work until intake has been quiet for quietMs', async () => {
    const priority = new IntakePriority({ maxDeferMs: 2_000, quietMs: 100 });
    const intake = intakeFor(priority, 150);
    const waited = giveWayTime(priority);
    await sleep(10);
    expect(priority.waiting).toBe(1);
    await intake;
    const ms = await waited;
    expect(ms).toBeGreaterThanOrEqual(240); // 150 of intake + 100 of quiet, less timer slack
    expect(ms).toBeLessThan(600);
    expect(priority.waiting).toBe(0);
  });

  it('keeps holding while intake requests follow each other closely', async () => {
    const priority = new IntakePriority({ maxDeferMs: 3_000, quietMs: 100 });
    const burst = (async () => {
      for (let i = 0; i < 4; i++) {
        await intakeFor(priority, 60);
        await sleep(30); // gaps shorter than quietMs
      }
    })();
    const ms = await giveWayTime(priority);
    await burst;
    expect(ms).toBeGreaterThanOrEqual(4 * 60 + 3 * 30 + 100 - 15);
  });

  it('never holds background work longer than maxDeferMs, so sustained intake cannot starve it', async () => {
    const priority = new IntakePriority({ maxDeferMs: 200, quietMs: 100 });
    const intake = intakeFor(priority, 800);
    const ms = await giveWayTime(priority);
    expect(ms).toBeGreaterThanOrEqual(190);
    expect(ms).toBeLessThan(500);
    await intake;
  });

  it('does not hold anything when turned off', async () => {
    const priority = new IntakePriority({ maxDeferMs: 0, quietMs: 100 });
    const intake = intakeFor(priority, 300);
    expect(await giveWayTime(priority)).toBeLessThan(20);
    await intake;
  });

  it('passes intake results and errors through', async () => {
    const priority = new IntakePriority({ maxDeferMs: 1_000, quietMs: 10 });
    await expect(priority.intake(async () => 42)).resolves.toBe(42);
    await expect(priority.intake(async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    await sleep(20);
    expect(await giveWayTime(priority)).toBeLessThan(20);
  });
});
