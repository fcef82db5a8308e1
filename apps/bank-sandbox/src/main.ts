import './tracing'; // first: starts OpenTelemetry before anything it instruments is loaded
import { loadConfigOrExit, runUntilSignal } from '@payments/lifecycle';
import { createLogger } from '@payments/logger';
import { loadBankSandboxConfig } from './config';
import { interDialectEnabled } from './inter-config';
import { startBankSandbox } from './server';

const config = loadConfigOrExit('bank-sandbox', () => loadBankSandboxConfig());
const logger = createLogger('bank-sandbox', config.logLevel);
void runUntilSignal({
  logger,
  shutdownGraceMs: config.shutdownGraceMs,
  ports: {
    BANK_SANDBOX_PORT: config.port,
    ...(interDialectEnabled(config.inter) ? { BANK_SANDBOX_INTER_PORT: config.inter.port } : {}),
  },
  start: async () => (await startBankSandbox(config, logger)).stop,
});
