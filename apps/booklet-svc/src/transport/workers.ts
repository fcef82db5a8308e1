import type { StartWorkers } from '@payments/bus';
import { Streams } from '@payments/contracts';
import { buildBooklet, type BuilderDeps } from '../domain/booklet-builder';

/** What the worker of booklet-svc needs: the builder's, and the relay's wake-up. */
export interface WorkerDeps extends BuilderDeps {
  /** Wakes the outbox relay after a commit that queued work. */
  onEnqueued: () => void;
}

/** Builds queued booklets, 2 at once. The stream exists: the service ensured it at start. */
export const startWorkers: StartWorkers<WorkerDeps> = async (bus, deps) => {
  const builds = await bus.streams.consumeEach(
    Streams.bookletBuilds,
    async (job) => {
      const outcome = await buildBooklet(deps, job);
      if (outcome === 'done') deps.onEnqueued();
      return outcome;
    },
    // Long: rendering a 1,000-installment PDF holds the event loop for seconds at a time, when no
    // heartbeat can be sent; a killed instance's build so comes back after 5 min, not seconds.
    { concurrency: 2, ackWaitMs: 300_000 },
  );
  return [builds];
};
