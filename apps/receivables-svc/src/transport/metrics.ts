import type { Kysely } from 'kysely';
import { ReceivableStates } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { Counter, Histogram, MetricNames, outboxWaitingGauge, scrapedGauge, type Registry } from '@payments/metrics';
import { outboxBacklog } from '@payments/outbox';
import type { ReceivablesDatabase } from '../db/schema';
import type { RegistrationObserver } from '../domain/registration';

/**
 * receivables-svc's own metrics: charges by state and the outbox backlog (grouped counts read at
 * scrape time, cached so scraping cannot hammer Postgres), and registration latency (observed by the
 * registration worker through the domain's RegistrationObserver port).
 */
export function receivablesMetrics(
  registry: Registry,
  deps: { db: Kysely<ReceivablesDatabase>; logger: Logger; outboxStreams: readonly string[] },
): { registration: RegistrationObserver } {
  scrapedGauge(registry, {
    name: MetricNames.chargesByState,
    help: 'Charges (receivables) by state, all tenants',
    labelNames: ['state'],
    read: () => countByState(deps.db),
    onError: (err) => deps.logger.warn({ err }, 'could not count charges for /metrics'),
  });
  outboxWaitingGauge(registry, {
    streams: deps.outboxStreams,
    backlog: () => outboxBacklog(deps.db),
    onError: (err) => deps.logger.warn({ err }, 'could not count the outbox for /metrics'),
  });
  const latency = new Histogram({
    name: MetricNames.registrationLatency,
    help: 'Time from a receivable being accepted to its registration with the provider',
    // From sub-second (idle system) to the provider being down for a while.
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    registers: [registry],
  });
  return {
    registration: {
      registered: (createdAt, registeredAt) =>
        latency.observe(Math.max(0, (registeredAt.getTime() - createdAt.getTime()) / 1000)),
    },
  };
}

/** What the provider webhook routes count: payments kept for an operator's refund decision. */
export interface PaymentMetrics {
  needsRefund(): void;
}

/**
 * receivables_payments_needing_refund_total: payments the provider reported for charges it had
 * cancelled or rejected (rows of payments_needing_refund). Shown at 0 from the start, so an alert on
 * its increase needs no first event.
 */
export function paymentMetrics(registry: Registry): PaymentMetrics {
  const needingRefund = new Counter({
    name: MetricNames.paymentsNeedingRefund,
    help: 'Payments received for charges the provider had cancelled or rejected: an operator decides on a refund',
    registers: [registry],
  });
  return { needsRefund: () => needingRefund.inc() };
}

/** One grouped count; every state shows, at 0 when no charge is in it. */
async function countByState(
  db: Kysely<ReceivablesDatabase>,
): Promise<Array<{ labels: { state: string }; value: number }>> {
  const rows = await db
    .selectFrom('receivables')
    .select((eb) => ['state', eb.fn.countAll<number>().as('count')])
    .groupBy('state')
    .execute();
  const counts = new Map<string, number>(ReceivableStates.map((s) => [s, 0]));
  for (const r of rows) counts.set(r.state, Number(r.count));
  return [...counts].map(([state, value]) => ({ labels: { state }, value }));
}
