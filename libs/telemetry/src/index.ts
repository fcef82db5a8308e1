// Light entry: only @opentelemetry/api, so libs can trace and propagate without loading the SDK. Apps
// start the SDK from '@payments/telemetry/sdk' (see startTelemetry) before anything else is loaded.
export {
  extractFromHeaders,
  fromCarrier,
  injectIntoHeaders,
  toCarrier,
  type HeaderReader,
  type HeaderWriter,
  type TraceCarrier,
} from './propagation';
export { activeTraceIds, detached, inStoredContext, recordFailure } from './spans';
export { MessagingAttributes } from './semconv';
// Types only from the SDK: light enough for the logger.
export { redactValue } from './redaction';
