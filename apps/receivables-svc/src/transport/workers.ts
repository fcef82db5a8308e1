import type { Bus, Consumption } from '@payments/bus';
import { Streams } from '@payments/contracts';
import { processCancellation, type CancellationDeps } from '../domain/cancellation';
import { registerReceivables, type RegistrationDeps } from '../domain/registration';
import type { IntakePriority } from './intake-priority';

/**
 * The JetStream consumers of receivables-svc: registration and cancellation jobs, several at once.
 * A job is acked only after its result is committed; `onEnqueued` wakes the outbox relay. Registration
 * jobs give way to intake first (see IntakePriority). The streams exist: the service ensured them at start.
 */
export async function startWorkers(
  bus: Bus,
  deps: RegistrationDeps & CancellationDeps,
  opts: {
    /** Registration jobs at once (REGISTRATION_CONCURRENCY); cancellation jobs get a quarter of it. */
    registrationConcurrency: number;
    priority: IntakePriority;
    onEnqueued: () => void;
  },
): Promise<Consumption[]> {
  // A registration job is a chunk of up to 100 receivables: one provider batch call, one write transaction.
  const registrations = await bus.streams.consumeEach(
    Streams.receivableRegistrations,
    async (job, info) => {
      await opts.priority.giveWay();
      const outcome = await registerReceivables(deps, job, info.deliveryCount);
      opts.onEnqueued();
      return outcome;
    },
    { concurrency: opts.registrationConcurrency, ackWaitMs: 120_000 },
  );
  const cancellations = await bus.streams.consumeEach(
    Streams.receivableCancellations,
    async (job, info) => {
      const outcome = await processCancellation(deps, job, info.deliveryCount);
      if (outcome === 'done') opts.onEnqueued();
      return outcome;
    },
    { concurrency: Math.max(1, Math.floor(opts.registrationConcurrency / 4)) },
  );
  return [registrations, cancellations];
}
