// main.ts imports this first, before any other module: the instrumentations patch http, koa, pg and
// undici as they are loaded, and a module loaded before them keeps its untraced functions.
import { startTelemetry } from '@payments/telemetry/sdk';
import { addShutdownHook } from '@payments/lifecycle';

// Spans still buffered are exported after the service has drained its work, before the process exits.
addShutdownHook(startTelemetry('callback-svc').shutdown);
