import type { StartWorkers } from '@payments/bus';
import {
  CallbackRequestSchema,
  compileValidator,
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
 * by a producer is never delivered twice. The stream exists: the service ensured it at start.
 */
export const startWorkers: StartWorkers<WorkerDeps> = async (bus, { engine }) => {
  const requests = await bus.streams.consume(
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
    { ackWaitMs: 10_000, maxBatch: 20 },
  ); // intake is one insert: a message unacked for 10 s went to a dead worker
  return [requests];
};

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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The charge a receivable's callback is about (every receivable payload names it as
 * accounts_receivable_id), for the list's receivable_id filter. The payload is the producer's and
 * not checked field by field: anything but a UUID is no charge (rather than a failed insert).
 */
export function receivableIdOf(r: Pick<CallbackRequest, 'event_type' | 'payload'>): string | null {
  if (!r.event_type.startsWith('receivable.')) return null;
  const id = r.payload.accounts_receivable_id;
  return typeof id === 'string' && UUID.test(id) ? id.toLowerCase() : null;
}
