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

// Timings leave room for a loaded 2-core machine: each claim is separated from the wrong outcome by
// seconds (a gate that waited when it should not, or waited for maxDeferMs or for the intake's end,
// lands far beyond the bound), never by a few hundred milliseconds.
describe('IntakePriority', () => {
  it('lets background work start at once when there is no intake', async () => {
    const priority = new IntakePriority({ maxDeferMs: 20_000, quietMs: 5_000 });
    expect(await giveWayTime(priority)).toBeLessThan(2_500); // holding would take quietMs at least
  });

  it('holds background work until intake has been quiet for quietMs', async () => {
    const priority = new IntakePriority({ maxDeferMs: 20_000, quietMs: 500 });
    const intake = intakeFor(priority, 1_000);
    const waited = giveWayTime(priority);
    await sleep(10);
    expect(priority.waiting).toBe(1);
    await intake;
    const ms = await waited;
    expect(ms).toBeGreaterThanOrEqual(1_000 + 500 - 15); // intake + quiet, less timer slack
    expect(ms).toBeLessThan(10_000); // released by the quiet, not by maxDeferMs
    expect(priority.waiting).toBe(0);
  });

  it('keeps holding while intake requests follow each other closely', async () => {
    const priority = new IntakePriority({ maxDeferMs: 20_000, quietMs: 1_000 });
    const burst = (async () => {
      for (let i = 0; i < 4; i++) {
        await intakeFor(priority, 60);
        await sleep(30); // gaps far shorter than quietMs
      }
    })();
    const ms = await giveWayTime(priority);
    await burst;
    expect(ms).toBeGreaterThanOrEqual(4 * 60 + 3 * 30 + 1_000 - 15);
    expect(ms).toBeLessThan(15_000);
  });

  it('never holds background work longer than maxDeferMs, so sustained intake cannot starve it', async () => {
    const priority = new IntakePriority({ maxDeferMs: 300, quietMs: 100 });
    const intake = intakeFor(priority, 2_500);
    const ms = await giveWayTime(priority);
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(2_000); // well before the intake ends (2.5 s)
    await intake;
  });

  it('does not hold anything when turned off', async () => {
    const priority = new IntakePriority({ maxDeferMs: 0, quietMs: 1_000 });
    const intake = intakeFor(priority, 2_000);
    expect(await giveWayTime(priority)).toBeLessThan(1_500); // holding would last the intake and the quiet: 3 s
    await intake;
  });

  it('passes intake results and errors through', async () => {
    const priority = new IntakePriority({ maxDeferMs: 10_000, quietMs: 100 });
    await expect(priority.intake(async () => 42)).resolves.toBe(42);
    await expect(
      priority.intake(async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await sleep(300);
    // A failed intake ends too: had it stayed in flight, this would wait maxDeferMs (10 s).
    expect(await giveWayTime(priority)).toBeLessThan(5_000);
  });
});
