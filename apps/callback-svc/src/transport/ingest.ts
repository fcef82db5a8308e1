import type { StartWorkers } from '@payments/bus';
import {
  CallbackRequestSchema,
  compileValidator,
  isUuid,
  Streams,
  type CallbackRequest,
  type JobOutcome,
} from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { toCarrier } from '@payments/telemetry';
import type { NewCallbackEvent } from '../domain/callback-event';
import type { DeliveryEngine } from '../domain/delivery-engine';

const validateRequest = compileValidator(CallbackRequestSchema);

/** What the worker of callback-svc needs. */
export interface WorkerDeps {
  /** Takes the requests in: stores them as events, for delivery. */
  engine: DeliveryEngine;
  logger: Logger;
}

/**
 * Takes callback request batches off JetStream into Postgres. Messages are acked only after their
 * insert committed; a request seen before (same event id) is ignored, so a redelivery or a republish
 * by a producer is never delivered twice. The stream and its consumer exist:
 * provisioned by `npm run admin -- bus provision`, checked by the service at start.
 *
 * Tenants take turns: messages are queued per tenant, and each insert takes up to INGEST_BATCH
 * messages of one tenant. One slot serves any tenant, one batch at a time, as a single tenant's
 * backlog always ran; a spare slot goes only to a tenant with nothing being stored, so another
 * tenant's few callbacks are stored (and claimed) beside a backlog's insert instead of behind the
 * backlog's messages in stream order. The turns reach as far as INGEST_WINDOW messages into the stream.
 */
export const startWorkers: StartWorkers<WorkerDeps> = async (bus, { engine }) => {
  const requests = await bus.streams.consumeFairlyInBatches(
    Streams.callbackRequests,
    async (items, info) => {
      const events: NewCallbackEvent[] = [];
      const outcomes = items.map((item, i): JobOutcome => {
        // The context of this message's consumer span: its deliveries continue the producer's trace.
        const traceContext = toCarrier(info.contexts[i]);
        // Typed as the registry's batch, but checked: a lone request from before batches may be on the stream.
        const { valid, problem } = checkRequests(item);
        for (const request of valid) events.push({ ...toEvent(request), traceContext });
        return problem === undefined ? 'done' : { deadLetter: problem };
      });
      await engine.accept(events);
      // A message with a malformed request goes to the dead letters once its good ones are stored: a
      // re-drive after the producer is mended stores the rest (the good ones are known by event id).
      return outcomes;
    },
    // Intake is one insert: a message unacked for 10 s went to a dead worker.
    { key: tenantOf, concurrency: 1, spare: 1, maxBatch: INGEST_BATCH, window: INGEST_WINDOW, ackWaitMs: 10_000 },
  );
  return [requests];
};

/** Messages stored in one insert (each carries up to MAX_CALLBACK_BATCH requests). */
const INGEST_BATCH = 20;
/** Messages held at once, queued per tenant: how far into the stream another tenant is seen. */
const INGEST_WINDOW = 200;

/**
 * The tenant a message's callbacks are for. Producers put one tenant's callbacks in a message (a
 * registration job is one tenant's); the first request's tenant stands for the message. A message
 * without one (malformed, dead-lettered by the handler) shares a queue with its kind.
 */
export function tenantOf(message: unknown): string {
  const lone = typeof message === 'object' && message !== null && 'tenant_id' in message ? message : undefined;
  const requests = (message as { requests?: unknown } | null)?.requests;
  const first: unknown = lone ?? (Array.isArray(requests) ? requests[0] : undefined);
  const tenant = typeof first === 'object' && first !== null ? (first as { tenant_id?: unknown }).tenant_id : undefined;
  return typeof tenant === 'string' ? tenant : '';
}

/**
 * The well-formed requests of a batch, and what is wrong with the others (undefined: nothing). A
 * malformed one does not hold back the rest of its batch. A lone request, as producers published
 * before batches, is still taken: messages left in the stream across an upgrade are not lost.
 */
function checkRequests(message: unknown): { valid: CallbackRequest[]; problem?: string } {
  const lone = typeof message === 'object' && message !== null && !('requests' in message) && 'event_id' in message;
  const requests = lone ? [message] : (message as { requests?: unknown } | null)?.requests;
  if (!Array.isArray(requests) || requests.length === 0)
    return { valid: [], problem: 'not a callback request batch: no requests' };
  const valid: CallbackRequest[] = [];
  const problems: string[] = [];
  requests.forEach((request, i) => {
    const result = validateRequest(request);
    if (result.ok) valid.push(result.value);
    else problems.push(`request ${i}: ${result.errors.map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`);
  });
  return problems.length === 0 ? { valid } : { valid, problem: `malformed callback requests: ${problems.join(' | ')}` };
}

function toEvent(r: CallbackRequest): NewCallbackEvent {
  return {
    eventId: r.event_id,
    tenantId: r.tenant_id,
    eventType: r.event_type,
    url: r.url,
    body: JSON.stringify(r.payload),
    receivableId: receivableIdOf(r),
  };
}

/**
 * The charge a receivable's callback is about (every receivable payload names it as
 * accounts_receivable_id), for the list's receivable_id filter. The payload is the producer's and
 * not checked field by field: anything but a UUID is no charge (rather than a failed insert).
 */
export function receivableIdOf(r: Pick<CallbackRequest, 'event_type' | 'payload'>): string | null {
  if (!r.event_type.startsWith('receivable.')) return null;
  const id = r.payload.accounts_receivable_id;
  return typeof id === 'string' && isUuid(id) ? id.toLowerCase() : null;
}
