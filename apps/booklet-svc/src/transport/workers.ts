import type { StartWorkers } from '@payments/bus';
import { Streams } from '@payments/contracts';
import { buildBooklet, type BuilderDeps } from '../domain/booklet-builder';

/** What the worker of booklet-svc needs: the builder's, and the relay's wake-up. */
export interface WorkerDeps extends BuilderDeps {
  /** Wakes the outbox relay after a commit that queued work. */
  onEnqueued: () => void;
  /** The build jobs' ack wait: the bus's default (10 s) unless a test shortens it. */
  ackWaitMs?: number;
}

/**
 * Builds queued booklets, 2 at once, taken fairly across tenants. The stream and its consumer exist:
 * provisioned by `npm run admin -- bus provision`, checked by the service at start.
 *
 * The bus's default ack wait (10 s): the renderer yields to the event loop after every page (3
 * installments, ~30 ms), so the bus's in-progress heartbeats go out during a build of any size (the
 * longest stall while building 1,000 installments: 0.1-0.5 s, test/booklet-worker.test.ts), and a
 * killed instance's build is taken over within one ack wait. Yielding bounds the stall, so no worker
 * thread is needed. consumeFairly, not consumeEach: it also keeps the jobs it holds waiting for a free
 * slot from redelivery (a 1,000-installment build takes 5-20 s, longer than the ack wait), and one
 * tenant's many booklets do not hold up another's.
 */
export const startWorkers: StartWorkers<WorkerDeps> = async (bus, deps) => {
  const builds = await bus.streams.consumeFairly(
    Streams.bookletBuilds,
    async (job) => {
      const outcome = await buildBooklet(deps, job);
      if (outcome === 'done') deps.onEnqueued();
      return outcome;
    },
    { key: (job) => job.tenant_id, concurrency: 2, ackWaitMs: deps.ackWaitMs },
  );
  return [builds];
};
