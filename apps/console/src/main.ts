import { loadConfigOrExit, runUntilSignal } from '@payments/lifecycle';
import { createLogger } from '@payments/logger';
import { loadConsoleConfig } from './config';
import { startConsole } from './server';

const config = loadConfigOrExit('console', () => loadConsoleConfig());
const logger = createLogger('console', config.logLevel);
void runUntilSignal({
  logger,
  shutdownGraceMs: config.shutdownGraceMs,
  ports: { CONSOLE_PORT: config.port },
  start: async () => (await startConsole(config, logger)).stop,
});
