import type { Kysely } from 'kysely';
import type { Logger } from '@payments/logger';
import type { ReceivablesDatabase } from '../db/schema';
import { rollUpRegistrations } from '../domain/registration-stats';

/** Every 5 s: the current minute of the statistics is at most that (plus a rollup's run) stale. */
export const ROLLUP_INTERVAL_MS = 5_000;

export interface RunningRollup {
  /** Waits for a rollup in flight, then runs no more. */
  stop(): Promise<void>;
}

/**
 * Runs the registration rollup on this instance every `intervalMs` (one at a time; instances skip
 * while another holds it). A failed run is logged and the next one tries again.
 */
export function startRegistrationRollup(
  db: Kysely<ReceivablesDatabase>,
  logger: Logger,
  intervalMs = ROLLUP_INTERVAL_MS,
): RunningRollup {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    running = rollUpRegistrations(db)
      .then(
        () => undefined,
        (err: unknown) => logger.warn({ err }, 'registration rollup failed'),
      )
      .finally(() => {
        if (!stopped) schedule();
      });
  };
  const schedule = () => {
    timer = setTimeout(tick, intervalMs);
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
