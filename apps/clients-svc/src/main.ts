import './tracing'; // first: starts OpenTelemetry before anything it instruments is loaded
import { loadConfigOrExit, runUntilSignal } from '@payments/lifecycle';
import { createLogger } from '@payments/logger';
import { loadClientsConfig } from './config';
import { startClientsService } from './service';

const config = loadConfigOrExit('clients-svc', () => loadClientsConfig());
const logger = createLogger('clients-svc', config.logLevel);
void runUntilSignal({
  logger,
  shutdownGraceMs: config.shutdownGraceMs,
  ports: { CLIENTS_PORT: config.port },
  start: async () => (await startClientsService(config, logger)).stop,
});
