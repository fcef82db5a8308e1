import type { Kysely } from 'kysely';
import { MicroBatcher } from '@payments/micro-batch';
import { inStoredContext, toCarrier, type TraceCarrier } from '@payments/telemetry';
import type { ReceivablesDatabase } from '../db/schema';
import { acceptReceivables, acceptRequests, type IntakeRequest, type IntakeResult } from '../domain/intake';
import type { ClientDirectory } from '../domain/ports';

/**
 * Requests of up to this many charges are gathered with others; larger ones are batches already and
 * run alone, at once, as before: gathering them would only make one transaction grow past what one
 * commit should hold, and make a large request wait for the small ones.
 */
export const COALESCED_MAX_CHARGES = 10;

/**
 * Requests one gathered transaction takes at most: with COALESCED_MAX_CHARGES that bounds it at a
 * thousand charges, the largest request an ERP may send, which one transaction holds well. Every
 * request the bus lets this instance serve at once fits in one batch, so none waits for a second turn.
 */
export const COALESCED_MAX_REQUESTS = 100;

/**
 * Gathered transactions running at once: two. While one batch waits on its round trips (clients-svc
 * for the payers, then Postgres for the insert and the commit), the other can use the event loop and
 * the database, and each takes what arrived during the other. One left the service idle during those
 * waits; more split the same requests into more, smaller commits, and commits are what a single charge
 * costs most. Measured with single-charge requests sixteen at a time, two did better than one or four.
 */
export const COALESCED_BATCHES_AT_ONCE = 2;

interface Gathered {
  request: IntakeRequest;
  /** The trace of the request, for the batch's work (and the registration jobs it queues) to continue. */
  carrier: TraceCarrier | undefined;
}

/**
 * Concurrent create requests, of any tenants, accepted in shared transactions (acceptRequests): a lone
 * request runs at once, and those arriving while batches run go together in the next one, so one commit
 * serves many single-charge POSTs and their registrations go in chunks. Each request is answered its own
 * counts, or fails alone with its own error.
 */
export class CoalescedIntake {
  private readonly batcher: MicroBatcher<Gathered, IntakeResult>;

  constructor(
    private readonly db: Kysely<ReceivablesDatabase>,
    private readonly clients: ClientDirectory,
  ) {
    this.batcher = new MicroBatcher({
      run: (batch) => this.run(batch),
      maxItems: COALESCED_MAX_REQUESTS,
      maxRunning: COALESCED_BATCHES_AT_ONCE,
    });
  }

  /** Accepts one request: gathered with others when small, alone when it is a batch of its own. */
  accept(request: IntakeRequest): Promise<IntakeResult> {
    if (request.items.length > COALESCED_MAX_CHARGES) return this.alone(request);
    return this.batcher.submit({ request, carrier: toCarrier() });
  }

  private alone({ tenantId, account, items }: IntakeRequest): Promise<IntakeResult> {
    return acceptReceivables(this.db, this.clients, tenantId, account, items);
  }

  /** In the trace of the batch's first request: a batch can carry one trace only. */
  private run(batch: Gathered[]) {
    return inStoredContext(batch[0]?.carrier, () =>
      acceptRequests(
        this.db,
        this.clients,
        batch.map((g) => g.request),
      ),
    );
  }
}
