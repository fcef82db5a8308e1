import './tracing'; // first: starts OpenTelemetry before anything it instruments is loaded
import { runUntilSignal } from '@payments/lifecycle';
import { createLogger } from '@payments/logger';
import { loadGatewayConfig } from './config';
import { startGateway } from './server';

const config = loadGatewayConfig();
const logger = createLogger('gateway', config.logLevel);
void runUntilSignal({
  logger,
  graceMs: config.shutdownGraceMs,
  start: async () => (await startGateway(config, logger)).stop,
});
