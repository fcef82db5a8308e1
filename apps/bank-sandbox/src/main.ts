import './tracing'; // first: starts OpenTelemetry before anything it instruments is loaded
import { runUntilSignal } from '@payments/lifecycle';
import { createLogger } from '@payments/logger';
import { loadBankSandboxConfig } from './config';
import { startBankSandbox } from './server';

const config = loadBankSandboxConfig();
const logger = createLogger('bank-sandbox', config.logLevel);
void runUntilSignal({
  logger,
  graceMs: config.shutdownGraceMs,
  start: async () => (await startBankSandbox(config, logger)).stop,
});
