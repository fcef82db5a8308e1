import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startTelemetry } from './sdk';

export type { ReadableSpan };

/** The SDK as the apps run it, but keeping finished spans in memory, for tests to look at. */
export interface InMemoryTelemetry {
  /** Spans finished so far, oldest first. */
  spans(): ReadableSpan[];
  /** Waits for exports still pending (the first spans wait for the resource's async attributes). */
  flush(): Promise<void>;
  reset(): void;
  shutdown(): Promise<void>;
}

/**
 * Starts the SDK with an in-memory exporter and no auto-instrumentation (its require hooks do not see
 * modules loaded through jest's own module loader); spans of code that creates them itself (bus,
 * outbox, deliveries) are all there. Export is synchronous (SimpleSpanProcessor): a span is readable
 * as soon as it ended, except while the resource's async attributes are pending (just after start):
 * flush() waits for those.
 */
export function startInMemoryTelemetry(serviceName = 'test'): InMemoryTelemetry {
  const exporter = new InMemorySpanExporter();
  const processor = new SimpleSpanProcessor(exporter);
  const telemetry = startTelemetry(serviceName, { spanProcessors: [processor], instrument: false });
  return {
    spans: () => exporter.getFinishedSpans(),
    flush: () => processor.forceFlush(),
    reset: () => exporter.reset(),
    shutdown: () => telemetry.shutdown(),
  };
}
