import './tracing'; // first: starts OpenTelemetry before anything it instruments is loaded
import { loadConfigOrExit, runUntilSignal } from '@payments/lifecycle';
import { createLogger } from '@payments/logger';
import { loadGatewayConfig } from './config';
import { startGateway } from './server';

const config = loadConfigOrExit('gateway', () => loadGatewayConfig());
const logger = createLogger('gateway', config.logLevel);
void runUntilSignal({
  logger,
  shutdownGraceMs: config.shutdownGraceMs,
  ports: { PORT: config.port, ADMIN_PORT: config.adminPort },
  start: async () => (await startGateway(config, logger)).stop,
});
