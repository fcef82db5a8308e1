import { createServer } from 'node:http';
import { closeServer, keepConnectionsAlive, listen, startService } from '@payments/lifecycle';
import { openServiceDatabaseIn } from '@payments/db';
import { migrationsCheck, postgresCheck } from '@payments/health';
import { createLogger, type Logger } from '@payments/logger';
import { createMetricsRegistry } from '@payments/metrics';
import type { BankSandboxConfig } from './config';
import { migrations, SCHEMA } from './db/migrations';
import type { BankSandboxDatabase } from './db/schema';
import { Behaviour } from './domain/behaviour';
import { ChargeStore } from './db/charge-store';
import { WebhookDispatcher } from './domain/webhook-dispatcher';
import { createSandboxApp } from './transport/http/app';
import { otelWebhookTracing } from './transport/http/otel-webhook-tracing';
import { createWebhookPoster } from './transport/http/webhook-poster';
import { interDialectEnabled } from './inter-config';
import { startInterDialect } from './transport/inter/server';

export interface RunningBankSandbox {
  /** Where it answers, e.g. http://127.0.0.1:3100 */
  url: string;
  port: number;
  /**
   * The Inter dialect (HTTPS, mutual TLS) when BANK_SANDBOX_INTER_TLS_* are set, or in development with
   * its own CA; its baseUrl ends in /inter, caFile is the CA its certificates chain to.
   */
  inter: { port: number; baseUrl: string; caFile: string } | null;
  stop(): Promise<void>;
}

/**
 * Starts the bank sandbox: migrates schema `bank_sandbox`, serves HTTP on config.port (0 = any), and
 * resumes delivering the payment webhooks still pending from an earlier run.
 */
export function startBankSandbox(
  config: BankSandboxConfig,
  logger: Logger = createLogger('bank-sandbox', config.logLevel),
): Promise<RunningBankSandbox> {
  return startService(async (scope) => {
    // Migrated beforehand (`npm run migrate`): only checked here, the start refused in one line otherwise.
    const db = await openServiceDatabaseIn<BankSandboxDatabase>(scope, {
      url: config.databaseUrl,
      schema: SCHEMA,
      applicationName: 'bank-sandbox',
      poolSize: config.databasePoolSize,
      migrations,
      logger,
    });
    const dispatcher = new WebhookDispatcher({
      db,
      webhook: config.webhook,
      logger,
      poster: createWebhookPoster({ timeoutMs: config.webhook.timeoutMs }),
      tracing: otelWebhookTracing,
    });
    // Started once the server listens, stopped after it (and the Inter dialect) closed: a request in
    // flight may still wake it.
    scope.defer('webhook dispatcher', () => dispatcher.stop());
    let port = config.port;
    const behaviour = new Behaviour(config.mode);
    const app = createSandboxApp({
      db,
      store: new ChargeStore(db, config.account),
      behaviour,
      dispatcher,
      payee: config.payee,
      apiKey: config.apiKey,
      slowMs: config.slowMs,
      publicUrl: () => config.publicUrl ?? `http://localhost:${port}`,
      logger,
      readiness: [postgresCheck(db), migrationsCheck(db, SCHEMA, Object.keys(migrations))],
      metrics: createMetricsRegistry('bank-sandbox'),
    });

    const inter = interDialectEnabled(config.inter)
      ? await scope.open(
          'Inter dialect',
          () =>
            startInterDialect({
              config: config.inter,
              db,
              bank: { account: config.account, payee: config.payee },
              behaviour,
              slowMs: config.slowMs,
              mainHost: () => new URL(config.publicUrl ?? `http://127.0.0.1:${port}`).host,
              logger,
            }),
          (dialect) => dialect.stop(),
        )
      : null;
    const server = keepConnectionsAlive(createServer(inter ? inter.wrap(app.callback()) : app.callback()));
    port = await listen(server, config.port);
    // Stop taking connections and let requests in flight finish before the rest closes.
    scope.defer('HTTP server', () => closeServer(server));
    dispatcher.start();
    logger.info({ port, mode: config.mode, webhookUrl: config.webhook.url }, 'bank-sandbox ready');
    return {
      url: `http://127.0.0.1:${port}`,
      port,
      inter: inter ? { port: inter.port, baseUrl: inter.baseUrl, caFile: inter.caFile } : null,
    };
  });
}
