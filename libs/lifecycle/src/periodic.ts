import type { Logger } from '@payments/logger';

export interface PeriodicOptions {
  /** Between the end of one run and the start of the next. */
  intervalMs: number;
  logger: Logger;
  /** Names the task in the log line of a failed run, e.g. 'registration rollup'. */
  what: string;
  /** Runs the task at once (on the next turn of the event loop) rather than after one interval. */
  runAtStart?: boolean;
}

export interface Periodic {
  /** Cancels the next run and waits for a run in flight; none starts afterwards. */
  stop(): Promise<void>;
}

/**
 * Runs `task` every `intervalMs` on this instance, one run at a time: the next run is scheduled when
 * the previous one ends, so a slow run delays the next rather than overlapping it. A failed run is
 * logged at warn and the next one tries again. The timer does not keep the process alive.
 */
export function startPeriodic(task: () => Promise<unknown>, opts: PeriodicOptions): Periodic {
  const { intervalMs, logger, what } = opts;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const run = () => {
    timer = undefined;
    // Through then(): a task that throws before returning its promise is a failed run too.
    running = Promise.resolve()
      .then(task)
      .then(
        () => undefined,
        (err: unknown) => logger.warn({ err, what }, `${what} failed; the next run retries`),
      )
      .finally(() => {
        running = undefined;
        schedule(intervalMs);
      });
  };
  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(run, delayMs);
    timer.unref();
  };

  schedule(opts.runAtStart ? 0 : intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
