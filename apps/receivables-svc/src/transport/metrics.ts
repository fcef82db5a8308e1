import type { Kysely } from 'kysely';
import type { ProviderKind } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { Counter, Histogram, MetricNames, outboxWaitingGauge, scrapedGauge, type Registry } from '@payments/metrics';
import { outboxBacklog } from '@payments/outbox';
import type { ReceivablesDatabase } from '../db/schema';
import type { NoticeObserver } from '../domain/notices';
import { reconciliationLagSeconds } from '../domain/reconciliation';
import { chargesByState } from '../domain/state-counts';
import type { RegistrationObserver } from '../domain/registration';

/**
 * receivables-svc's own metrics: charges by state (counters kept as states change) and the outbox
 * backlog, read at scrape time and cached so scraping cannot hammer Postgres, and registration latency (observed by the
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

/**
 * What payments and bank notices count (the domain's NoticeObserver): payments kept for an operator's
 * refund decision, payments off the amount due, notices for unknown charges, and what only
 * reconciliation found. Counters are shown at 0 from the start, so an alert on an increase needs no
 * first event.
 */
export type PaymentMetrics = NoticeObserver;

export function paymentMetrics(registry: Registry): PaymentMetrics {
  const needingRefund = new Counter({
    name: MetricNames.paymentsNeedingRefund,
    help: 'Payments received for charges the provider had cancelled or rejected: an operator decides on a refund',
    registers: [registry],
  });
  const offAmount = new Counter({
    name: MetricNames.paymentsOffAmount,
    help: 'Payments recorded with an amount below or above the amount due, by direction',
    labelNames: ['direction'],
    registers: [registry],
  });
  for (const direction of ['below', 'above']) offAmount.inc({ direction }, 0);
  const unknownCharge = new Counter({
    name: MetricNames.noticesUnknownCharge,
    help: 'Bank notices naming a charge not known (yet): kept and retried, never dropped',
    registers: [registry],
  });
  const found = new Counter({
    name: MetricNames.reconciliationFound,
    help: 'Charge changes (paid, cancelled) that only reconciliation brought: what the bank notices missed',
    labelNames: ['kind'],
    registers: [registry],
  });
  for (const kind of ['paid', 'cancelled']) found.inc({ kind }, 0);
  return {
    needsRefund: () => needingRefund.inc(),
    offAmount: (direction) => offAmount.inc({ direction }),
    unknownCharge: () => unknownCharge.inc(),
    foundByReconciliation: (kind) => found.inc({ kind }),
  };
}

/** Reconciliation lag and the notices waiting, read from Postgres at scrape time (cached). */
export function reconciliationMetrics(
  registry: Registry,
  deps: { db: Kysely<ReceivablesDatabase>; logger: Logger; sweptKinds: ProviderKind[] },
): void {
  scrapedGauge(registry, {
    name: MetricNames.reconciliationLag,
    help: 'Seconds since the last complete reconciliation sweep of the bank account with open charges that waited longest',
    read: async () => [{ labels: {}, value: await reconciliationLagSeconds(deps.db, deps.sweptKinds) }],
    onError: (err) => deps.logger.warn({ err }, 'could not read the reconciliation lag for /metrics'),
  });
  scrapedGauge(registry, {
    name: MetricNames.noticesWaiting,
    help: 'Bank notices stored and not applied yet (waiting for their charge or for the bank)',
    read: async () => {
      const row = await deps.db
        .selectFrom('bank_notices')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('applied_at', 'is', null)
        .executeTakeFirst();
      return [{ labels: {}, value: Number(row?.count ?? 0) }];
    },
    onError: (err) => deps.logger.warn({ err }, 'could not count bank notices for /metrics'),
  });
}

/** Every state shows, at 0 when no charge is in it; from the counters, never from the receivables. */
async function countByState(
  db: Kysely<ReceivablesDatabase>,
): Promise<Array<{ labels: { state: string }; value: number }>> {
  return [...(await chargesByState(db))].map(([state, value]) => ({ labels: { state }, value }));
}
