import './tracing'; // first: starts OpenTelemetry before anything it instruments is loaded
import { loadConfigOrExit, runUntilSignal } from '@payments/lifecycle';
import { createLogger } from '@payments/logger';
import { loadCallbackConfig } from './config';
import { startCallbackService } from './service';

const config = loadConfigOrExit('callback-svc', () => loadCallbackConfig());
const logger = createLogger('callback-svc', config.logLevel);
void runUntilSignal({
  logger,
  shutdownGraceMs: config.shutdownGraceMs,
  ports: { CALLBACK_PORT: config.port },
  start: async () => (await startCallbackService(config, logger)).stop,
});
