import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import type { Logger } from '@payments/logger';
import type { BankSandboxDatabase } from '../db/schema';
import type { Behaviour } from '../domain/behaviour';
import type { WebhookSettings } from '../domain/webhook-dispatcher';
import { createInterApiApp } from './api-app';
import type { InterSandboxConfig } from './config';
import type { InterTables } from './db';
import { InterBank } from './inter-bank';
import { withInterControls } from './controls';
import type { SandboxBank } from './terms';
import { InterWebhookSender } from './webhook-sender';

export { loadInterSandboxConfig, type InterSandboxConfig } from './config';
export { interDialectMigration } from './migration';
export { INTER_PREFIX } from './api-app';

export interface InterDialectDeps {
  config: InterSandboxConfig;
  db: Kysely<BankSandboxDatabase>;
  bank: SandboxBank;
  behaviour: Behaviour;
  slowMs: number;
  webhook: WebhookSettings;
  logger: Logger;
}

export interface RunningInterDialect {
  port: number;
  /** The API root an Inter provider account points at: https://127.0.0.1:<port>/inter */
  baseUrl: string;
  /** Puts the Inter controls (/sandbox/inter/**, pay by codigoSolicitacao) in front of the sandbox's own handler. */
  wrap(main: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void;
  stop(): Promise<void>;
}

/**
 * Starts the Inter Cobrança v3 dialect: an HTTPS listener that requires a client certificate signed by
 * the configured CA (config.tls; mutual TLS as at Inter), and the sender of its payment webhooks.
 */
export async function startInterDialect(deps: InterDialectDeps): Promise<RunningInterDialect> {
  const tls = deps.config.tls;
  if (!tls) throw new Error('the Inter dialect needs BANK_SANDBOX_INTER_TLS_* files');
  const [cert, key, ca] = await Promise.all([
    readFile(tls.certFile, 'utf8'),
    readFile(tls.keyFile, 'utf8'),
    readFile(tls.caFile, 'utf8'),
  ]);
  const db = deps.db.withTables<InterTables>();
  const bank = new InterBank(db, deps.bank, deps.config.issueDelayMs);
  const sender = new InterWebhookSender(db, deps.webhook, deps.logger, { certPem: cert, keyPem: key });
  const app = createInterApiApp({ bank, behaviour: deps.behaviour, slowMs: deps.slowMs, logger: deps.logger });
  const server = createServer({ cert, key, ca, requestCert: true, rejectUnauthorized: true }, app.callback());
  // A refused handshake (no or a foreign client certificate) is the client's problem, not an error of ours.
  server.on('tlsClientError', (err) => deps.logger.debug({ err: err.message }, 'inter tls handshake refused'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.config.port, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  sender.start();
  deps.logger.info({ port }, 'bank-sandbox inter dialect ready');
  return {
    port,
    baseUrl: `https://127.0.0.1:${port}/inter`,
    wrap: (main) => withInterControls(main, { db, bank, logger: deps.logger, wake: () => sender.wake() }),
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      await sender.stop();
    },
  };
}
