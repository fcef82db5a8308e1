import { createServer, type IncomingMessage, type Server } from 'node:http';
import Koa, { type ParameterizedContext } from 'koa';
import Router, { type RouterContext } from '@koa/router';
import type { Kysely } from 'kysely';
import { closeServer, keepConnectionsAlive, listen } from '@payments/lifecycle';
import type { Logger } from '@payments/logger';
import { mountHealthRoutes, type ReadinessCheck } from '@payments/health';
import { httpMetrics, metricsHandler, METRICS_PATH, type Registry } from '@payments/metrics';
import { ServiceError } from '@payments/contracts';
import { payloadTooLarge, problemErrors } from '@payments/http-problem';
import type { ReceivablesDatabase } from '../db/schema';
import { storeNotices } from '../db/notice-store';
import { recordPayment, type ChargeScope, type PaymentRecord } from '../domain/payments';
import type { ProviderAccounts } from '../domain/ports';
import {
  InvalidWebhookError,
  sandboxWebhookVerifier,
  verifySandboxWebhook,
  type WebhookHeaders,
} from './providers/bank-sandbox-webhook';
import { parseInterWebhook } from './providers/inter';
import { InvalidPixWebhookError, parsePixWebhook, PIX_WEBHOOK_PATH } from './providers/pix/webhook';
import { INTER_WEBHOOK_PATH } from './providers/providers';
import type { PaymentMetrics } from './metrics';

/** A bank notice's body at most: a notice is a few KiB, a PIX batch a few dozen. */
const MAX_WEBHOOK_BYTES = 256 * 1024;

/**
 * receivables-svc's own HTTP port: provider webhooks (payment notifications), and the ops routes
 * /healthz, /readyz, /metrics. Not behind the gateway: the sandbox signs its webhooks with the shared
 * secret (Standard Webhooks: a bad signature or a timestamp over 5 minutes off is 401, a webhook-id
 * already applied 200 with nothing changed); Inter's notices (mutual TLS, ended before this port) are
 * stored and answered 200 (never 404, never dropped), then applied by the notice worker once
 * the bank, asked with the account's own credentials, confirms them. PIX notices (the standard's
 * `{ pix: [...] }`, from a `pix` account's bank or an `inter` account's PIX API) are stored the same way,
 * those of PIX paying no charge of ours answered 200 and not stored. A payment
 * for a charge the provider had cancelled or rejected is answered 200 (the provider stops retrying),
 * kept for a refund and counted in receivables_payments_needing_refund_total.
 *
 * Errors are answered as the gateway answers them (libs/http-problem): application/problem+json, 413
 * naming the limit for a body over 256 KiB, 400 for a body that is not a notice, never a stack trace;
 * only the sandbox's 401 keeps its `{ error }` body, which the sandbox reads.
 */
export async function startProviderWebhookServer(deps: {
  db: Kysely<ReceivablesDatabase>;
  accounts: ProviderAccounts;
  port: number;
  /** PROVIDER_WEBHOOK_SECRET: the sandbox signs its webhooks with it (Standard Webhooks). */
  providerWebhookSecret: string;
  timeZone: string;
  logger: Logger;
  onEnqueued: () => void;
  /** Wakes the notice worker after a bank notice was stored. */
  onNotice: () => void;
  readiness: ReadinessCheck[];
  metrics: Registry;
  /** Counters of payments (registered once in the registry, shared with the notice worker). */
  paymentMetrics: PaymentMetrics;
}): Promise<{ port: number; stop(): Promise<void> }> {
  const app = new Koa();
  app.use(httpMetrics(deps.metrics));
  app.use(problemErrors({ logger: deps.logger, service: 'receivables-svc', bodyLimitBytes: MAX_WEBHOOK_BYTES }));
  const counted = (result: PaymentRecord): PaymentRecord => {
    if (result === 'approved') deps.onEnqueued();
    if (result === 'needs_refund') deps.paymentMetrics.needsRefund();
    return result;
  };
  const verifier = sandboxWebhookVerifier(deps.providerWebhookSecret);
  const router = new Router();
  router.post('/provider/webhooks/bank-sandbox', async (ctx) => {
    const raw = await readRaw(ctx, MAX_WEBHOOK_BYTES);
    let notice;
    try {
      notice = verifySandboxWebhook(verifier, raw, ctx.headers as WebhookHeaders);
    } catch (err) {
      if (!(err instanceof InvalidWebhookError)) throw err;
      deps.logger.warn({ reason: err.message }, 'provider webhook refused');
      ctx.status = 401;
      ctx.body = { error: err.message };
      return;
    }
    if (!notice) {
      ctx.status = 204;
      return;
    }
    // An unknown account is 404 not_found (sandboxScope): the provider retries, as our registration
    // may not be committed yet.
    const scope = await sandboxScope(deps.accounts, notice.accountReference);
    const result = counted(
      await recordPayment(deps.db, notice.payment, scope, deps.timeZone, deps.logger, deps.paymentMetrics),
    );
    ctx.status = 200;
    ctx.body = { result };
  });
  router.post(`${INTER_WEBHOOK_PATH}/:accountId`, async (ctx) => {
    const account = await deps.accounts.find(ctx.params.accountId ?? '');
    if (!account || account.provider !== 'inter')
      throw new ServiceError('not_found', 'no inter provider account with this id');
    const raw = await readRaw(ctx, MAX_WEBHOOK_BYTES);
    let notices;
    try {
      notices = parseInterWebhook(raw);
    } catch (err) {
      deps.logger.warn({ accountId: account.id, reason: (err as Error).message }, 'inter webhook refused');
      throw new ServiceError('malformed_json', 'not an Inter charge notification');
    }
    // Stored, then answered: the notice worker applies it (confirmed with the bank first), and keeps
    // it while its charge is unknown or the bank does not show it yet. Inter stops sending it.
    const stored = await storeNotices(
      deps.db,
      account,
      'webhook',
      notices.map(({ ourNumber: _ourNumber, ...notice }) => notice),
    );
    deps.onNotice();
    ctx.status = 200;
    ctx.body = { stored };
  });
  // The standard posts to the URL it was given + '/pix'; a PSP posting to the URL itself is heard too.
  const pixNotices = async (ctx: RouterContext) => {
    const account = await deps.accounts.find(ctx.params.accountId ?? '');
    if (!account || (account.provider !== 'pix' && account.provider !== 'inter'))
      throw new ServiceError('not_found', 'no PIX provider account with this id');
    const raw = await readRaw(ctx, MAX_WEBHOOK_BYTES);
    let notices;
    try {
      notices = parsePixWebhook(raw);
    } catch (err) {
      if (!(err instanceof InvalidPixWebhookError)) throw err;
      deps.logger.warn({ accountId: account.id, reason: err.message }, 'pix webhook refused');
      throw new ServiceError('malformed_json', 'not a PIX notification (the standard\'s { "pix": [...] })');
    }
    // Stored, then answered, as Inter's: the worker consults the cobv before anything changes. PIX paying
    // no charge of ours (no txid, another system's txid, a boleto's) are not stored: nothing to apply.
    const stored = await storeNotices(deps.db, account, 'webhook', notices);
    if (stored > 0) deps.onNotice();
    ctx.status = 200;
    ctx.body = { stored };
  };
  router.post(`${PIX_WEBHOOK_PATH}/:accountId/pix`, pixNotices);
  router.post(`${PIX_WEBHOOK_PATH}/:accountId`, pixNotices);
  mountHealthRoutes(router, { checks: deps.readiness });
  router.get(METRICS_PATH, metricsHandler(deps.metrics));
  app.use(router.routes());
  const server: Server = keepConnectionsAlive(createServer(app.callback()));
  // A port in use fails the start, with main naming RECEIVABLES_PORT.
  const port = await listen(server, deps.port);
  return { port, stop: () => closeServer(server) };
}

/** A sandbox notice names the account version its charge was registered under; none: a legacy charge. */
async function sandboxScope(accounts: ProviderAccounts, accountReference: string | null): Promise<ChargeScope> {
  if (accountReference === null) return 'legacy';
  const account = await accounts.find(accountReference);
  if (!account || account.provider !== 'sandbox')
    throw new ServiceError('not_found', `no sandbox provider account ${accountReference}`);
  return { accountId: account.id, tenantId: account.tenantId };
}

/**
 * The body as text, within `limit` bytes: 413 when Content-Length announces more (before reading a
 * byte) or when the stream exceeds it. A refused body is not read further: the answer closes the
 * connection instead of draining it.
 */
function readRaw(ctx: ParameterizedContext, limit: number): Promise<string> {
  const req: IncomingMessage = ctx.req;
  if (Number(ctx.get('content-length') || 0) > limit) return Promise.reject(refuse(ctx, payloadTooLarge(limit)));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= limit) chunks.push(c);
      else {
        stop();
        reject(refuse(ctx, payloadTooLarge(limit)));
      }
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size).toString('utf8'));
    };
    const onError = () => {
      stop();
      reject(refuse(ctx, new ServiceError('malformed_json', 'the request body could not be read (aborted)')));
    };
    const stop = () => req.off('data', onData).off('end', onEnd).off('error', onError).on('error', ignore);
    req.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

function refuse(ctx: ParameterizedContext, err: ServiceError): ServiceError {
  ctx.set('connection', 'close');
  ctx.req.pause();
  return err;
}

const ignore = () => undefined;
