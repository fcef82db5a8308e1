import type { StartWorkers } from '@payments/bus';
import { CallbackRequestSchema, compileValidator, Streams, type CallbackRequest } from '@payments/contracts';
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
export const startWorkers: StartWorkers<WorkerDeps> = async (bus, { engine, logger }) => {
  const requests = await bus.streams.consume(
    Streams.callbackRequests,
    async (items, info) => {
      const events: NewCallbackEvent[] = [];
      items.forEach((item, i) => {
        // The context of this message's consumer span: its deliveries continue the producer's trace.
        const traceContext = toCarrier(info.contexts[i]);
        // Typed as the registry's batch, but checked: a lone request from before batches may be on the stream.
        for (const request of validRequests(item, logger)) events.push({ ...toEvent(request), traceContext });
      });
      await engine.accept(events);
    },
    { ackWaitMs: 10_000, maxBatch: 20 },
  ); // intake is one insert: a message unacked for 10 s went to a dead worker
  return [requests];
};

/**
 * The well-formed requests of a batch. A malformed one is logged and dropped alone: the others in
 * its batch are still delivered (a redelivery could not mend it). A lone request, as producers
 * published before batches, is still taken: messages left in the stream across an upgrade are not lost.
 */
function validRequests(message: unknown, logger: Logger): CallbackRequest[] {
  const lone = typeof message === 'object' && message !== null && !('requests' in message) && 'event_id' in message;
  const requests = lone ? [message] : (message as { requests?: unknown } | null)?.requests;
  if (!Array.isArray(requests) || requests.length === 0) {
    logger.error({ message: typeof message }, 'malformed callback request batch dropped');
    return [];
  }
  const valid: CallbackRequest[] = [];
  for (const request of requests) {
    const result = validateRequest(request);
    if (result.ok) valid.push(result.value);
    else logger.error({ errors: result.errors }, 'malformed callback request dropped');
  }
  return valid;
}

function toEvent(r: CallbackRequest): NewCallbackEvent {
  return {
    eventId: r.event_id,
    tenantId: r.tenant_id,
    eventType: r.event_type,
    url: r.url,
    body: JSON.stringify(r.payload),
  };
}
