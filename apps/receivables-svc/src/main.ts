import './tracing'; // first: starts OpenTelemetry before anything it instruments is loaded
import { runUntilSignal } from '@payments/lifecycle';
import { createLogger } from '@payments/logger';
import { loadReceivablesConfig } from './config';
import { startReceivablesService } from './service';

const config = loadReceivablesConfig();
const logger = createLogger('receivables-svc', config.logLevel);
void runUntilSignal({
  logger,
  graceMs: config.shutdownGraceMs,
  start: async () => (await startReceivablesService(config, logger)).stop,
});
