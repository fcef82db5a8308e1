import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@payments/logger';
import { loadConsoleConfig, type ConsoleConfig } from '../../src/config';
import { consoleApp } from '../../src/server';

export interface ConsoleUnderTest {
  url: string;
  config: ConsoleConfig;
  /** Ends its open connections first (a page waiting on a hung gateway never ends by itself), then closes. */
  close(): Promise<void>;
}

/**
 * A console in this process on 127.0.0.1 (any free port), on both APIs of `gatewayUrl`, in
 * development with a session key of its own; `env` is read on top (e.g. a shorter deadline).
 */
export async function startConsole(gatewayUrl: string, env: Record<string, string> = {}): Promise<ConsoleUnderTest> {
  const config = loadConsoleConfig({
    NODE_ENV: 'development',
    GATEWAY_URL: gatewayUrl,
    GATEWAY_ADMIN_URL: gatewayUrl,
    CONSOLE_SESSION_KEY: randomBytes(32).toString('base64'),
    ...env,
  });
  const server = consoleApp(config, createLogger('console', 'silent')).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    config,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
