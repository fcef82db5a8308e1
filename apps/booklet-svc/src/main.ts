import './tracing'; // first: starts OpenTelemetry before anything it instruments is loaded
import { loadConfigOrExit, runUntilSignal } from '@payments/lifecycle';
import { createLogger } from '@payments/logger';
import { loadBookletConfig } from './config';
import { startBookletService } from './service';

const config = loadConfigOrExit('booklet-svc', () => loadBookletConfig());
const logger = createLogger('booklet-svc', config.logLevel);
void runUntilSignal({
  logger,
  shutdownGraceMs: config.shutdownGraceMs,
  ports: { BOOKLET_PORT: config.port },
  start: async () => (await startBookletService(config, logger)).stop,
});
