import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import Koa from 'koa';
import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import type { CertificateAuthority } from '@payments/dev-certificates';
import type { Logger } from '@payments/logger';
import { isCalendarDate } from '../../domain/calendar-date';
import { paymentAmountCents } from '../../domain/money';
import { body, errors, fail } from '../inter/control-errors';
import { applyFaults, noFaults } from '../../domain/inter/faults';
import type { InterBank } from '../../domain/inter/inter-bank';
import type { SandboxBank } from '../../domain/inter/terms';
import { brasiliaDate } from '../../domain/inter/wire';
import { decimal } from '../../domain/pix/amount-due';
import { PIX_DIALECT_ROOTS, PIX_TOKEN_PATH } from './api-app';
import type { CobvRow } from '../../db/pix';
import type { PixBank } from '../../domain/pix/pix-bank';
import { notFound } from '../../domain/pix/problems';
import { cobvPayloadView, cobvView, receiverView } from '../../domain/pix/wire';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Where the locations of cobvs are served on the main port: <host>/qr/v2/cobv/<token>. */
export const LOCATION_PATH = '/qr/v2/cobv/';

export interface PixControlsDeps {
  pix: PixBank;
  inter: InterBank;
  bank: SandboxBank;
  ca: CertificateAuthority | null;
  /** https://127.0.0.1:<port> of the mutual TLS port, where both dialects answer. */
  tlsRoot: string;
  logger: Logger;
}

/** The PIX controls as the Inter controls mount them in front of the sandbox's own app. */
export interface PixControls {
  /** Whether the path is one of the PIX controls or a location. */
  handles(path: string): boolean;
  /** Whether the pay control's id names a cobv (its txid). */
  owns(id: string): Promise<boolean>;
  handler: Handler;
}

/**
 * The PIX API's sandbox controls, on the sandbox's main (plain HTTP) port: integrations of the
 * standard's dialect, the pay control by txid, a devolução made at the bank, the cobvs as the bank
 * holds them, an expiry, the faults (the Inter dialect's, under /sandbox/pix/faults too), and the
 * locations the BR Codes point at (their payload as JSON).
 */
export function createPixControls(deps: PixControlsDeps): PixControls {
  const app = createControlsApp(deps).callback();
  return {
    handles: (path) => path.startsWith('/sandbox/pix/') || path.startsWith(LOCATION_PATH),
    owns: async (id) => /^[a-zA-Z0-9]{26,35}$/.test(id) && (await deps.pix.byTxid(id)) !== null,
    handler: (req, res) => void app(req, res),
  };
}

function createControlsApp(deps: PixControlsDeps): Koa {
  const app = new Koa();
  app.use(errors);
  app.use(bodyParser({ enableTypes: ['json'], strict: true }));
  const router = new Router();
  const { pix } = deps;

  router.post('/sandbox/charges/:txid/pay', async (ctx) => {
    const fields = body(ctx);
    if (fields.method !== 'pix') return fail(ctx, 422, 'invalid_request', 'a cobv is paid with method "pix"');
    const amountCents = amountOf(fields.amount);
    if (amountCents === undefined)
      return fail(ctx, 422, 'invalid_request', 'amount must be a positive number of reais with at most 2 decimals');
    const paidOn = fields.paid_on ?? brasiliaDate();
    if (typeof paidOn !== 'string' || !isCalendarDate(paidOn))
      return fail(ctx, 422, 'invalid_request', 'paid_on must be a date YYYY-MM-DD (the payment day in Brasília)');
    // A payment on another day than today is dated that day, at noon in Brasília.
    const at = fields.paid_on === undefined ? new Date() : new Date(`${paidOn}T12:00:00-03:00`);
    const result = await pix.pay(ctx.params.txid, amountCents, paidOn, at);
    if (result.outcome === 'not_found') return fail(ctx, 404, 'not_found', `no charge with id ${ctx.params.txid}`);
    if (result.outcome === 'not_open')
      return fail(ctx, 409, 'charge_not_open', `charge ${ctx.params.txid}: ${result.reason}`);
    deps.logger.info({ txid: ctx.params.txid, amountCents: result.received.amount_cents }, 'pix cobv paid');
    ctx.body = await chargeView(deps, result.row);
  });

  router.post('/sandbox/pix/integrations', async (ctx) => {
    if (!deps.ca)
      return fail(
        ctx,
        409,
        'no_ca_key',
        'the dialect runs with TLS files and no CA key: it cannot sign integration certificates',
      );
    const integration = await deps.inter.createIntegration(deps.ca);
    ctx.status = 201;
    ctx.body = {
      client_id: integration.client_id,
      client_secret: integration.client_secret,
      cert_pem: integration.cert_pem,
      key_pem: integration.key_pem,
      pix_key: integration.pix_key,
      pix_api_url: `${deps.tlsRoot}${PIX_DIALECT_ROOTS.standard}`,
      token_url: `${deps.tlsRoot}${PIX_TOKEN_PATH}`,
    };
  });

  // The tenant returns a payment in its bank's app: a devolução of the cobv's PIX, with its notice.
  router.post('/sandbox/pix/refunds', async (ctx) => {
    const fields = body(ctx);
    if (typeof fields.txid !== 'string') return fail(ctx, 422, 'invalid_request', 'txid (the cobv) is required');
    const amountCents = amountOf(fields.amount);
    if (amountCents === undefined)
      return fail(ctx, 422, 'invalid_request', 'amount must be a positive number of reais with at most 2 decimals');
    const { received } = await pix.paymentsOf([fields.txid]);
    const payment = received[received.length - 1];
    if (!payment) return fail(ctx, 404, 'not_found', `no PIX received for txid ${fields.txid}`);
    const id = `SBX${randomBytes(12).toString('hex')}`;
    // Without an amount, what is left of the payment after the devoluções already made.
    const returned = (await pix.refundsOf([payment.end_to_end_id]))
      .filter((r) => r.status !== 'NAO_REALIZADO')
      .reduce((sum, r) => sum + r.amount_cents, 0);
    const left = payment.amount_cents - returned;
    if (amountCents === null && left <= 0)
      return fail(ctx, 409, 'refund_refused', 'the payment was wholly returned already');
    const result = await pix.refund(null, payment.end_to_end_id, { id, amountCents: amountCents ?? left });
    if (result.outcome === 'not_found') return fail(ctx, 404, 'not_found', `no PIX received for txid ${fields.txid}`);
    if (result.outcome === 'refused') return fail(ctx, 409, 'refund_refused', result.reason);
    ctx.status = 201;
    ctx.body = {
      e2eid: payment.end_to_end_id,
      id: result.refund.id,
      rtr_id: result.refund.rtr_id,
      valor: decimal(result.refund.amount_cents),
      status: result.refund.status,
    };
  });

  router.get('/sandbox/pix/charges', async (ctx) => {
    const clientId = ctx.query.client_id;
    if (typeof clientId !== 'string' || clientId === '')
      return fail(ctx, 422, 'invalid_request', 'client_id (the integration) is required');
    const { rows } = await pix.list(clientId, { from: new Date(0), to: new Date(8.64e15), page: 0, size: 10_000 });
    ctx.body = { charges: await Promise.all(rows.map((row) => chargeView(deps, row))) };
  });

  router.get('/sandbox/pix/charges/:txid', async (ctx) => {
    const row = await pix.byTxid(ctx.params.txid);
    if (!row) return fail(ctx, 404, 'not_found', 'no such cobv');
    ctx.body = { ...(await chargeView(deps, row)), notifications: await pix.noticesOf(row.txid) };
  });

  // The cobv reaches the end of its validity now (as the bank's clock does after validadeAposVencimento days).
  router.post('/sandbox/pix/charges/:txid/expire', async (ctx) => {
    const expired = await pix.expire(ctx.params.txid);
    if (expired) return void (ctx.body = await chargeView(deps, expired));
    const row = await pix.byTxid(ctx.params.txid);
    if (!row) return fail(ctx, 404, 'not_found', 'no such cobv');
    fail(ctx, 409, 'charge_not_open', `the cobv is ${row.status}`);
  });

  // The same faults as /sandbox/inter/faults (one set for the whole bank).
  router.get('/sandbox/pix/faults', (ctx) => {
    ctx.body = { ...deps.inter.faults };
  });
  router.post('/sandbox/pix/faults', (ctx) => {
    const problem = applyFaults(deps.inter.faults, body(ctx));
    if (problem) return fail(ctx, 422, 'invalid_request', problem);
    ctx.body = { ...deps.inter.faults };
  });
  router.delete('/sandbox/pix/faults', (ctx) => {
    applyFaults(deps.inter.faults, { ...noFaults() });
    ctx.body = { ...deps.inter.faults };
  });

  // The location of a BR Code: the cobv's payload (CobVPayload) as JSON, with the amount due on DPP (default today).
  router.get(`${LOCATION_PATH}:token`, async (ctx) => {
    const row = await pix.byLocation(ctx.params.token);
    if (!row) {
      const problem = notFound(
        'CobPayloadNaoEncontrado',
        'a cobrança em questão não foi encontrada para a location requisitada.',
      );
      ctx.status = 404;
      ctx.type = 'application/problem+json';
      return void (ctx.body = JSON.stringify(problem.problem()));
    }
    const dpp = typeof ctx.query.DPP === 'string' && isCalendarDate(ctx.query.DPP) ? ctx.query.DPP : brasiliaDate();
    const receiver = receiverView(deps.bank, await pix.holder(row.client_id));
    ctx.body = cobvPayloadView(row, receiver, dpp, new Date());
  });

  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** A cobv as GET /cobv/{txid} answers it, with its client. */
async function chargeView(deps: PixControlsDeps, row: CobvRow) {
  const [holder, payments] = await Promise.all([deps.pix.holder(row.client_id), deps.pix.paymentsOf([row.txid])]);
  return { client_id: row.client_id, ...cobvView(row, { receiver: receiverView(deps.bank, holder), ...payments }) };
}

/** amount in reais: null when absent (what is due), undefined when not a valid amount. */
function amountOf(value: unknown): number | null | undefined {
  if (value === undefined || value === null) return null;
  const cents = typeof value === 'number' ? paymentAmountCents(value) : null;
  return cents ?? undefined;
}
