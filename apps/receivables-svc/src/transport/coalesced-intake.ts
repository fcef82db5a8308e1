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
 * thousand charges, the size of the largest request an ERP sends, which one transaction holds well.
 * Sixteen or sixty-four ERP requests in flight (the bus's serve limit) all fit in one or two batches.
 */
export const COALESCED_MAX_REQUESTS = 100;

/**
 * Gathered transactions running at once. One would leave Postgres idle while the batch asks clients-svc
 * for its payers and the next batch waits; two let one batch's lookup overlap the other's commit, and
 * under steady single charges each batch takes what arrived during the other. More would only split the
 * same requests into more, smaller commits: commits are what a single charge costs most on this
 * machine, so fewer and larger ones are the point.
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
