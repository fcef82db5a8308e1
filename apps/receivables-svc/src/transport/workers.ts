import type { StartWorkers } from '@payments/bus';
import { Streams } from '@payments/contracts';
import { processCancellation, type CancellationDeps } from '../domain/cancellation';
import { registerReceivables, type RegistrationDeps } from '../domain/registration';

/** What the workers of receivables-svc need: the domain's, and how they run. */
export type WorkerDeps = RegistrationDeps &
  CancellationDeps & {
    /** Registration jobs at once (REGISTRATION_CONCURRENCY); cancellation jobs get a quarter of it. */
    registrationConcurrency: number;
    /** Wakes the outbox relay after a commit that queued work. */
    onEnqueued: () => void;
  };

/**
 * The JetStream consumers of receivables-svc: registration and cancellation jobs, several at once.
 * A job is acked only after its result is committed; `onEnqueued` wakes the outbox relay. The streams
 * and consumers exist: provisioned by `npm run admin -- bus provision`, checked by the service at start.
 */
export const startWorkers: StartWorkers<WorkerDeps> = async (bus, deps) => {
  // A registration job is a chunk of up to 100 receivables: one provider batch call, one write transaction.
  // Tenants take turns: one tenant's backlog does not hold back another's few jobs, as far as
  // the consumer's window (DEFAULT_FAIR_WINDOW jobs) reaches. Cancellations are few: stream order.
  const registrations = await bus.streams.consumeFairly(
    Streams.receivableRegistrations,
    async (job, info) => {
      const outcome = await registerReceivables(deps, job, info.deliveryCount);
      deps.onEnqueued();
      return outcome;
    },
    // The bus's short ack wait with heartbeats: a killed instance's jobs come back within seconds.
    // Spare slots (a quarter more) for a tenant with nothing running: its few charges start at once
    // instead of waiting for one of a backlog's 100-charge jobs to end.
    {
      key: (job) => job.tenant_id,
      concurrency: deps.registrationConcurrency,
      spare: Math.max(1, Math.floor(deps.registrationConcurrency / 4)),
    },
  );
  const cancellations = await bus.streams.consumeEach(
    Streams.receivableCancellations,
    async (job, info) => {
      const outcome = await processCancellation(deps, job, info.deliveryCount);
      if (outcome === 'done') deps.onEnqueued();
      return outcome;
    },
    { concurrency: Math.max(1, Math.floor(deps.registrationConcurrency / 4)) },
  );
  return [registrations, cancellations];
};
