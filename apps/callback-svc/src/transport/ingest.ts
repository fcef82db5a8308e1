import type { Bus, Consumption } from '@payments/bus';
import { CallbackRequestSchema, compileValidator, Streams, type CallbackRequest } from '@payments/contracts';
import type { Logger } from '@payments/logger';
import { toCarrier } from '@payments/telemetry';
import type { NewCallbackEvent } from '../domain/callback-event';
import type { DeliveryEngine } from '../domain/delivery-engine';

const validate = compileValidator(CallbackRequestSchema);

/**
 * Takes callback requests off JetStream into Postgres. A batch is acked only after its insert
 * committed; a request seen before (same event id) is ignored, so a redelivery or a republish by a
 * producer is never delivered twice.
 */
export async function consumeCallbackRequests(bus: Bus, engine: DeliveryEngine, logger: Logger): Promise<Consumption> {
  await bus.streams.ensure(Streams.callbackRequests);
  return bus.streams.consume<unknown>(Streams.callbackRequests, async (items, info) => {
    const events: NewCallbackEvent[] = [];
    items.forEach((item, i) => {
      const result = validate(item);
      if (!result.ok) {
        logger.error({ errors: result.errors }, 'malformed callback request dropped');
        return;
      }
      // The context of this request's consumer span: its deliveries continue the producer's trace.
      events.push({ ...toEvent(result.value), traceContext: toCarrier(info.contexts[i]) });
    });
    await engine.accept(events);
  }, { ackWaitMs: 10_000 }); // intake is one insert: a message unacked for 10 s went to a dead worker
}

function toEvent(r: CallbackRequest): NewCallbackEvent {
  return { eventId: r.event_id, tenantId: r.tenant_id, eventType: r.event_type, url: r.url, body: JSON.stringify(r.payload) };
}
