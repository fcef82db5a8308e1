import { createLogger } from '@payments/logger';
import { startPeriodic, type Periodic } from '../src';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A real logger whose lines the test reads. */
function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('periodic-test', 'info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** Polls `check` until it holds, or fails after `ms`. */
async function eventually(check: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

describe('startPeriodic', () => {
  let periodic: Periodic | undefined;
  afterEach(async () => {
    await periodic?.stop();
    periodic = undefined;
  });

  it('runs the task again every interval, the first after one interval', async () => {
    const { logger } = capturedLogger();
    const startedAt = Date.now();
    const runs: number[] = [];
    periodic = startPeriodic(async () => void runs.push(Date.now() - startedAt), {
      intervalMs: 40,
      logger,
      what: 'job',
    });
    await sleep(20);
    expect(runs).toEqual([]);
    await eventually(() => runs.length >= 3);
    expect(runs[0]).toBeGreaterThanOrEqual(35); // timers may fire a millisecond early
  });

  it('runs at start when asked', async () => {
    const { logger } = capturedLogger();
    let runs = 0;
    periodic = startPeriodic(async () => void runs++, { intervalMs: 10_000, logger, what: 'job', runAtStart: true });
    await eventually(() => runs === 1, 500);
    await sleep(50);
    expect(runs).toBe(1);
  });

  it('never overlaps runs when one takes longer than the interval', async () => {
    const { logger } = capturedLogger();
    let inFlight = 0;
    let mostInFlight = 0;
    const ends: number[] = [];
    const starts: number[] = [];
    periodic = startPeriodic(
      async () => {
        starts.push(Date.now());
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        await sleep(60);
        inFlight--;
        ends.push(Date.now());
      },
      { intervalMs: 10, logger, what: 'slow job', runAtStart: true },
    );
    await eventually(() => ends.length >= 3);
    expect(mostInFlight).toBe(1);
    // Each run starts an interval after the previous one ended.
    expect(starts[1] - ends[0]).toBeGreaterThanOrEqual(9);
    expect(starts[2] - ends[1]).toBeGreaterThanOrEqual(9);
  });

  it('logs a failed run at warn, naming the task, and runs again', async () => {
    const { logger, lines } = capturedLogger();
    let runs = 0;
    periodic = startPeriodic(
      async () => {
        runs++;
        if (runs === 1) throw new Error('postgres went away');
      },
      { intervalMs: 10, logger, what: 'nightly sweep', runAtStart: true },
    );
    await eventually(() => runs >= 2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      what: 'nightly sweep',
      msg: 'nightly sweep failed; the next run retries',
      err: { message: 'postgres went away' },
    });
  });

  it('treats a task that throws before returning a promise as a failed run', async () => {
    const { logger, lines } = capturedLogger();
    let runs = 0;
    periodic = startPeriodic(
      () => {
        runs++;
        throw new Error('sync failure');
      },
      { intervalMs: 10, logger, what: 'job', runAtStart: true },
    );
    await eventually(() => runs >= 2);
    expect(lines[0]).toMatchObject({ level: 40, err: { message: 'sync failure' } });
  });

  it('stop() waits for the run in flight, and nothing runs afterwards', async () => {
    const { logger } = capturedLogger();
    let started = 0;
    let finished = 0;
    periodic = startPeriodic(
      async () => {
        started++;
        await sleep(80);
        finished++;
      },
      { intervalMs: 5, logger, what: 'job', runAtStart: true },
    );
    await eventually(() => started === 1);
    await periodic.stop();
    expect(finished).toBe(1);
    await sleep(60);
    expect(started).toBe(1);
  });

  it('stop() before the first run cancels it', async () => {
    const { logger } = capturedLogger();
    let runs = 0;
    const p = startPeriodic(async () => void runs++, { intervalMs: 5, logger, what: 'job', runAtStart: true });
    await p.stop();
    await sleep(40);
    expect(runs).toBe(0);
  });
});
