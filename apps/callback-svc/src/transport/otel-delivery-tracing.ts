import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { detached, fromCarrier, recordFailure } from '@payments/telemetry';
import type { DeliveryTracing } from '../domain/delivery-tracing';

const tracer = trace.getTracer('@payments/callback-svc');

/**
 * Delivery tracing with OpenTelemetry: each attempt is a span, child of the callback request the event
 * came from (its context is stored with the event), so the attempt and its HTTP POST join the trace of
 * the ERP request behind it, however long after it runs.
 */
export const otelDeliveryTracing: DeliveryTracing = {
  attempt(event, run) {
    const attributes = {
      'callback.event_id': event.eventId,
      'callback.attempt_in_run': event.failuresInRun + 1,
      'server.address': event.targetHost,
    };
    return tracer.startActiveSpan(
      'deliver callback',
      { kind: SpanKind.INTERNAL, attributes },
      fromCarrier(event.traceContext),
      async (span) => {
        try {
          return await run(({ status, httpStatus, error }) => {
            span.setAttribute('callback.status', status);
            if (httpStatus !== null) span.setAttribute('http.response.status_code', httpStatus);
            if (status !== 'delivered' && status !== 'postponed')
              span.setStatus({ code: SpanStatusCode.ERROR, message: error ?? 'not delivered' });
          });
        } catch (err) {
          recordFailure(span, err);
          throw err;
        } finally {
          span.end();
        }
      },
    );
  },
  detached,
};
