import type { Kysely } from 'kysely';
import { startPeriodic, type Periodic } from '@payments/lifecycle';
import type { Logger } from '@payments/logger';
import type { ReceivablesDatabase } from '../db/schema';
import { rollUpRegistrations } from '../domain/registration-stats';

/** Every 5 s: the current minute of the statistics is at most that (plus a rollup's run) stale. */
export const ROLLUP_INTERVAL_MS = 5_000;

/**
 * Runs the registration rollup on this instance every `intervalMs` (one at a time; instances skip
 * while another holds it). A failed run is logged and the next one tries again; stop() waits for a
 * run in flight.
 */
export function startRegistrationRollup(
  db: Kysely<ReceivablesDatabase>,
  logger: Logger,
  intervalMs = ROLLUP_INTERVAL_MS,
): Periodic {
  return startPeriodic(() => rollUpRegistrations(db), { intervalMs, logger, what: 'registration rollup' });
}
