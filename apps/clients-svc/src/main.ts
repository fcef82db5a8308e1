import './tracing'; // first: starts OpenTelemetry before anything it instruments is loaded
import { runUntilSignal } from '@payments/lifecycle';
import { createLogger } from '@payments/logger';
import { loadClientsConfig } from './config';
import { startClientsService } from './service';

const config = loadClientsConfig();
const logger = createLogger('clients-svc', config.logLevel);
void runUntilSignal({
  logger,
  graceMs: config.shutdownGraceMs,
  start: async () => (await startClientsService(config, logger)).stop,
});
