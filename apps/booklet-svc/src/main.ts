import './tracing'; // first: starts OpenTelemetry before anything it instruments is loaded
import { runUntilSignal } from '@payments/lifecycle';
import { createLogger } from '@payments/logger';
import { loadBookletConfig } from './config';
import { startBookletService } from './service';

const config = loadBookletConfig();
const logger = createLogger('booklet-svc', config.logLevel);
void runUntilSignal({
  logger,
  graceMs: config.shutdownGraceMs,
  start: async () => (await startBookletService(config, logger)).stop,
});
