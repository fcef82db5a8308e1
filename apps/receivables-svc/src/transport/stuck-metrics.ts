import type { Kysely } from 'kysely';
import type { Logger } from '@payments/logger';
import { MetricNames, scrapedGauge, DEFAULT_SCRAPE_TTL_MS, type Registry } from '@payments/metrics';
import type { ReceivablesDatabase } from '../db/schema';
import { STUCK_AFTER_MS, stuckRegistrationsByProvider } from '../domain/registration-waits';

/**
 * Charges stuck on a bank that does not take them, per provider kind, read at scrape time
 * from the queued rows alone (their partial index), never by counting the whole table:
 * receivables_registrations_stuck (waiting longer than STUCK_AFTER_MS) and
 * receivables_registration_oldest_wait_seconds (the longest waiting one's age; 0 with none). Alert
 * on the first above 0 or the second above a few minutes.
 */
export function stuckRegistrationMetrics(
  registry: Registry,
  deps: { db: Kysely<ReceivablesDatabase>; logger: Logger },
): void {
  // One read serves both gauges (and concurrent scrapes).
  let cached: { at: number; read: ReturnType<typeof stuckRegistrationsByProvider> } | undefined;
  const read = () => {
    if (!cached || Date.now() - cached.at >= DEFAULT_SCRAPE_TTL_MS)
      cached = { at: Date.now(), read: stuckRegistrationsByProvider(deps.db) };
    return cached.read;
  };
  const onError = (err: unknown) =>
    deps.logger.warn({ err }, 'could not read the charges waiting for a bank for /metrics');
  scrapedGauge(registry, {
    name: MetricNames.registrationsStuck,
    help: `Charges waiting longer than ${STUCK_AFTER_MS / 60_000} minutes for their bank to take them, per provider kind`,
    labelNames: ['provider'],
    read: async () => (await read()).map((r) => ({ labels: { provider: r.provider }, value: r.stuck })),
    onError,
  });
  scrapedGauge(registry, {
    name: MetricNames.registrationOldestWait,
    help: 'Age of the charge waiting longest for its bank to take it, per provider kind (0: none waiting)',
    labelNames: ['provider'],
    read: async () => (await read()).map((r) => ({ labels: { provider: r.provider }, value: r.oldestAgeSeconds })),
    onError,
  });
}
