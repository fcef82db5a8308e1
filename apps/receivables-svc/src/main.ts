import './tracing'; // first: starts OpenTelemetry before anything it instruments is loaded
import { loadConfigOrExit, runUntilSignal } from '@payments/lifecycle';
import { createLogger } from '@payments/logger';
import { loadReceivablesConfig } from './config';
import { startReceivablesService } from './service';

const config = loadConfigOrExit('receivables-svc', () => loadReceivablesConfig());
const logger = createLogger('receivables-svc', config.logLevel);
void runUntilSignal({
  logger,
  shutdownGraceMs: config.shutdownGraceMs,
  ports: { RECEIVABLES_PORT: config.port },
  start: async () => (await startReceivablesService(config, logger)).stop,
});
