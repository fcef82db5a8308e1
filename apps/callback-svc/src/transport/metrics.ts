import type { Logger } from '@payments/logger';
import { Counter, Gauge, MetricNames, scrapedGauge, type Registry } from '@payments/metrics';
import type { AttemptListener } from '../domain/delivery-engine';
import type { EventStore } from '../domain/event-store';

type AttemptOutcome = 'delivered' | 'failed' | 'dead';

export interface CallbackMetricsConfig {
  /** The service's Prometheus registry (served on /metrics). */
  readonly registry: Registry;
  /** Counts the waiting deliveries at scrape time. */
  readonly store: EventStore;
  /** Warned when the count fails. */
  readonly logger: Logger;
  /** Claimed events the delivery engine holds now, read at scrape time. */
  readonly heldCount: () => number;
  /** Hosts the delivery engine remembers as failing, read at scrape time. */
  readonly failingHostCount: () => number;
}

/**
 * callback-svc's own metrics: attempts by outcome and dead callbacks (fed by the delivery engine's
 * attempt listener, so the domain knows nothing of Prometheus) and the delivery queue depth (read
 * from Postgres at scrape time, cached), and the events this worker holds claimed.
 */
export function callbackMetrics({ registry, store, logger, heldCount, failingHostCount }: CallbackMetricsConfig): {
  onAttempt: AttemptListener;
} {
  const attempts = new Counter({
    name: MetricNames.callbackAttempts,
    help: 'Callback delivery attempts by outcome: delivered, failed (will be retried), dead (the last attempt failed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const dead = new Counter({
    name: MetricNames.callbacksDead,
    help: 'Callbacks that ran out of attempts (or whose URL was refused)',
    registers: [registry],
  });
  // Every outcome shows from the start, at 0, so rate() works before the first failure.
  for (const outcome of ['delivered', 'failed', 'dead'] satisfies AttemptOutcome[]) attempts.inc({ outcome }, 0);
  scrapedGauge(registry, {
    name: MetricNames.callbackDeliveriesWaiting,
    help: 'Callback deliveries waiting: pending events, due now or scheduled for a retry',
    read: async () => [{ labels: {}, value: await store.countWaiting() }],
    onError: (err) => logger.warn({ err }, 'could not count waiting callbacks for /metrics'),
  });
  new Gauge({
    name: MetricNames.callbackDeliveriesHeld,
    help: 'Claimed callback events this worker holds in memory: waiting for a delivery slot, or in flight',
    registers: [registry],
    collect() {
      this.set(heldCount());
    },
  });
  new Gauge({
    name: MetricNames.callbackFailingHosts,
    help: 'Receiving hosts this worker remembers as failing (held to a smaller share); idle ones expire',
    registers: [registry],
    collect() {
      this.set(failingHostCount());
    },
  });
  return {
    onAttempt: (_event, status) => {
      const outcome: AttemptOutcome = status === 'pending' ? 'failed' : status;
      attempts.inc({ outcome });
      if (outcome === 'dead') dead.inc();
    },
  };
}
