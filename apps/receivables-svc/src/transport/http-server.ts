import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import type { Kysely } from 'kysely';
import type { Logger } from '@payments/logger';
import { mountHealthRoutes, type ReadinessCheck } from '@payments/health';
import { httpMetrics, metricsHandler, METRICS_PATH, type Registry } from '@payments/metrics';
import { ServiceError } from '@payments/contracts';
import type { ReceivablesDatabase } from '../db/schema';
import { recordPayment } from '../domain/payments';
import { InvalidWebhookError, verifySandboxWebhook } from '../provider/bank-sandbox-webhook';

/**
 * receivables-svc's own HTTP port: provider webhooks (payment notifications), and the ops routes
 * /healthz, /readyz, /metrics. Not behind the gateway: the provider authenticates with the shared
 * webhook secret, not with an ERP's JWT.
 */
export async function startProviderWebhookServer(deps: {
  db: Kysely<ReceivablesDatabase>;
  port: number;
  /** PROVIDER_WEBHOOK_SECRET: the provider signs its webhooks with it. */
  providerWebhookSecret: string;
  timeZone: string;
  logger: Logger;
  onEnqueued: () => void;
  readiness: ReadinessCheck[];
  metrics: Registry;
}): Promise<{ port: number; stop(): Promise<void> }> {
  const app = new Koa();
  app.use(httpMetrics(deps.metrics));
  const router = new Router();
  router.post('/provider/webhooks/bank-sandbox', async (ctx) => {
    const raw = await readRaw(ctx.req, 256 * 1024);
    let payment;
    try {
      payment = verifySandboxWebhook(
        deps.providerWebhookSecret,
        raw,
        ctx.get('x-sandbox-signature') || undefined,
        ctx.get('x-sandbox-event-id') || undefined,
      );
    } catch (err) {
      if (!(err instanceof InvalidWebhookError)) throw err;
      deps.logger.warn({ reason: err.message }, 'provider webhook refused');
      ctx.status = 401;
      ctx.body = { error: err.message };
      return;
    }
    if (!payment) {
      ctx.status = 204;
      return;
    }
    try {
      const result = await recordPayment(deps.db, payment, deps.timeZone, deps.logger);
      if (result === 'approved') deps.onEnqueued();
      ctx.status = 200;
      ctx.body = { result };
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'not_found') {
        ctx.status = 404; // the provider retries: our registration may not be committed yet
        ctx.body = { error: err.detail };
        return;
      }
      throw err;
    }
  });
  mountHealthRoutes(router, { checks: deps.readiness });
  router.get(METRICS_PATH, metricsHandler(deps.metrics));
  app.use(router.routes());
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject); // a port in use (EADDRINUSE) fails the start, with main naming RECEIVABLES_PORT
    server.listen(deps.port, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function readRaw(req: NodeJS.ReadableStream, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) reject(new Error('webhook body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
