import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import type { CertificateAuthority } from '@payments/dev-certificates';
import type { Logger } from '@payments/logger';
import { paymentAmountCents } from '../../domain/money';
import type { CallMeter } from '../../domain/inter/call-meter';
import type { InterDb } from '../../db/inter';
import { body, ControlError, errors, fail } from './control-errors';
import { applyFaults } from '../../domain/inter/faults';
import type { PixControls } from '../pix/controls';
import { isUuid } from '../../domain/uuid';
import type { InterBank, PaymentMethod } from '../../domain/inter/inter-bank';
import { chargeView } from '../../domain/inter/wire';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const PAY_PATH = /^\/sandbox\/charges\/([^/]+)\/pay\/?$/;
const METHODS: readonly PaymentMethod[] = ['boleto', 'pix', 'manual'];

/** What the issuer says when cancelling in Inter's app (motivoCancelamento of the charge). */
const ISSUER_CANCEL_REASON = 'Cancelado pelo beneficiário';

export interface InterControlsDeps {
  db: InterDb;
  bank: InterBank;
  meter: CallMeter;
  /** Signs integration certificates; null when the dialect runs with TLS files and no CA key. */
  ca: CertificateAuthority | null;
  logger: Logger;
  /** The PIX API's controls and locations (a cobv is paid by its txid through the same pay control). */
  pix?: PixControls;
}

/**
 * The Inter dialect's sandbox controls, on the sandbox's main (plain HTTP) port in front of its own app:
 *  - /sandbox/inter/**: integrations, faults, call counts, charges as the bank holds them, the issuer's
 *    cancel, an expiry, the behaviour of the next create, an account's holder;
 *  - POST /sandbox/charges/{id}/pay when id names an Inter charge (its codigoSolicitacao, nossoNumero or
 *    txid; nossoNumeros are unique across the whole sandbox). Everything else goes to the sandbox's own
 *    app untouched (its body unread).
 */
export function withInterControls(main: Handler, deps: InterControlsDeps): Handler {
  const controls = createControlsApp(deps).callback();
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path.startsWith('/sandbox/inter/')) return void controls(req, res);
    const { pix } = deps;
    if (pix?.handles(path)) return pix.handler(req, res);
    const pay = req.method === 'POST' ? PAY_PATH.exec(path) : null;
    if (!pay) return main(req, res);
    const id = decodeURIComponent(pay[1]);
    // An Inter charge first, then a cobv (txids are unique across the sandbox), else the sandbox's own charges.
    deps.bank
      .payTarget(id)
      .then(async (codigo) => {
        if (codigo) return void controls(req, res);
        if (pix && (await pix.owns(id))) return pix.handler(req, res);
        main(req, res);
      })
      .catch((err: unknown) => {
        deps.logger.error({ err }, 'inter pay control failed');
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"code":"internal_error"}}');
      });
  };
}

function createControlsApp(deps: InterControlsDeps): Koa {
  const app = new Koa();
  app.use(errors);
  app.use(bodyParser({ enableTypes: ['json'], strict: true }));
  const router = new Router();
  const { bank } = deps;

  router.post('/sandbox/charges/:id/pay', async (ctx) => {
    const { method, amountCents } = paymentRequest(body(ctx));
    const codigo = await bank.payTarget(ctx.params.id);
    const result = codigo ? await bank.pay(codigo, method, amountCents) : ({ outcome: 'not_found' } as const);
    if (result.outcome === 'not_found') return fail(ctx, 404, 'not_found', `no charge with id ${ctx.params.id}`);
    if (result.outcome === 'not_open')
      return fail(
        ctx,
        409,
        'charge_not_open',
        `charge ${ctx.params.id} is ${chargeView(result.charge).cobranca.situacao}`,
      );
    deps.logger.info({ codigoSolicitacao: codigo, method, amountCents }, 'inter charge paid');
    ctx.body = chargeView(result.charge);
  });

  router.post('/sandbox/inter/integrations', async (ctx) => {
    if (!deps.ca)
      return fail(
        ctx,
        409,
        'no_ca_key',
        'the Inter dialect runs with TLS files and no BANK_SANDBOX_INTER_TLS_CA_KEY_FILE: it cannot sign integration certificates',
      );
    ctx.status = 201;
    ctx.body = await bank.createIntegration(deps.ca);
  });

  router.get('/sandbox/inter/faults', (ctx) => {
    ctx.body = { ...bank.faults };
  });
  router.post('/sandbox/inter/faults', (ctx) => {
    const problem = applyFaults(bank.faults, body(ctx));
    if (problem) return fail(ctx, 422, 'invalid_request', problem);
    deps.logger.info({ faults: bank.faults }, 'inter faults set');
    ctx.body = { ...bank.faults };
  });
  router.delete('/sandbox/inter/faults', (ctx) => {
    applyFaults(bank.faults, {
      consult_not_found_ms: 0,
      rate_limit_per_minute: null,
      drop_webhooks: false,
      no_pix_key: false,
    });
    ctx.body = { ...bank.faults };
  });

  router.get('/sandbox/inter/calls', (ctx) => {
    const clientId = ctx.query.client_id;
    if (typeof clientId !== 'string' || clientId === '')
      return fail(ctx, 422, 'invalid_request', 'client_id (the integration) is required');
    ctx.body = deps.meter.report(clientId);
  });

  // The sandbox has one nossoNumero sequence for every dialect: this sets it (the client in the path is kept for old callers).
  router.post('/sandbox/inter/clients/:clientId/next-our-number', async (ctx) => {
    const value = body(ctx).value;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > 99_999_999_999)
      return fail(ctx, 422, 'invalid_request', 'value must be an integer from 1 to 99999999999');
    await bank.setNextOurNumber(value);
    ctx.body = { next_our_number: value };
  });

  router.put('/sandbox/inter/clients/:clientId/holder', async (ctx) => {
    const fields = body(ctx);
    const text = (name: string) =>
      typeof fields[name] === 'string' && fields[name] !== '' ? (fields[name] as string) : null;
    const [name, taxId, city, pixKey] = [text('name'), text('tax_id'), text('city'), text('pix_key')];
    if (!name || !taxId || !city || (pixKey === null && fields.pix_key !== null))
      return fail(
        ctx,
        422,
        'invalid_request',
        'name, tax_id and city are required strings; pix_key a string or null (no PIX key)',
      );
    const client = await bank.setHolder(ctx.params.clientId, { name, tax_id: taxId, city, pix_key: pixKey });
    ctx.body = { client_id: client.client_id, account: client.account, holder: client.holder };
  });

  router.get('/sandbox/inter/behaviour', (ctx) => {
    ctx.body = behaviourBody(bank);
  });
  router.post('/sandbox/inter/behaviour', (ctx) => {
    const fields = body(ctx);
    const ms = (name: string) => {
      const value = fields[name];
      if (value === undefined) return undefined;
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > 600_000) return null;
      return value;
    };
    const [slowOnce, issueDelay] = [ms('slow_once_ms'), ms('issue_delay_ms')];
    const failIssueOnce = fields.fail_issue_once;
    if (slowOnce === null || issueDelay === null || (failIssueOnce !== undefined && typeof failIssueOnce !== 'boolean'))
      return fail(
        ctx,
        422,
        'invalid_request',
        'slow_once_ms and issue_delay_ms are milliseconds (0 to 600000), fail_issue_once a boolean',
      );
    if (slowOnce !== undefined) bank.behaviour.slowOnceMs = slowOnce;
    if (issueDelay !== undefined) bank.behaviour.issueDelayMs = issueDelay;
    if (failIssueOnce !== undefined) bank.behaviour.failIssueOnce = failIssueOnce;
    ctx.body = behaviourBody(bank);
  });

  router.get('/sandbox/inter/charges', async (ctx) => {
    let query = deps.db.selectFrom('inter_charges').selectAll().orderBy('created_at');
    if (typeof ctx.query.client_id === 'string') query = query.where('client_id', '=', ctx.query.client_id);
    if (typeof ctx.query.seu_numero === 'string') query = query.where('seu_numero', '=', ctx.query.seu_numero);
    const rows = await query.limit(10_000).execute();
    ctx.body = { charges: rows.map((row) => chargeView(row)) };
  });

  router.get('/sandbox/inter/charges/:codigoSolicitacao', async (ctx) => {
    if (!isUuid(ctx.params.codigoSolicitacao)) return fail(ctx, 404, 'not_found', 'no such charge');
    const row = await deps.db
      .selectFrom('inter_charges')
      .selectAll()
      .where('codigo_solicitacao', '=', ctx.params.codigoSolicitacao.toLowerCase())
      .executeTakeFirst();
    if (!row) return fail(ctx, 404, 'not_found', 'no such charge');
    const notifications = await deps.db
      .selectFrom('inter_notifications')
      .select(['notification_id', 'url', 'body', 'status', 'attempt_count', 'last_status_code', 'last_error'])
      .where('codigo_solicitacao', '=', row.codigo_solicitacao)
      .orderBy('created_at')
      .execute();
    ctx.body = { client_id: row.client_id, ...chargeView(row), notifications };
  });

  // The issuer cancels in Inter's app: the charge is cancelled at the bank, and its CANCELADO notice follows.
  router.post('/sandbox/inter/charges/:codigoSolicitacao/cancel', async (ctx) => {
    const result = await bank.cancel(null, ctx.params.codigoSolicitacao, ISSUER_CANCEL_REASON);
    if (result.outcome === 'not_found') return fail(ctx, 404, 'not_found', 'no such charge');
    if (result.outcome === 'not_open')
      return fail(ctx, 409, 'charge_not_open', `charge is ${chargeView(result.charge).cobranca.situacao}`);
    ctx.body = chargeView(result.charge);
  });

  // The charge reaches numDiasAgenda days past its due date now: EXPIRADO, and its notice follows.
  router.post('/sandbox/inter/charges/:codigoSolicitacao/expire', async (ctx) => {
    const result = await bank.expire(ctx.params.codigoSolicitacao);
    if (result.outcome === 'not_found') return fail(ctx, 404, 'not_found', 'no such charge');
    if (result.outcome === 'not_open')
      return fail(ctx, 409, 'charge_not_open', `charge is ${chargeView(result.charge).cobranca.situacao}`);
    ctx.body = chargeView(result.charge);
  });

  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

function behaviourBody(bank: InterBank) {
  const { slowOnceMs, issueDelayMs, failIssueOnce } = bank.behaviour;
  return { slow_once_ms: slowOnceMs, issue_delay_ms: issueDelayMs, fail_issue_once: failIssueOnce };
}

/** `{ method, amount? }` as the sandbox's own pay control takes it: amount in reais, the nominal value when absent. */
function paymentRequest(fields: Record<string, unknown>): { method: PaymentMethod; amountCents: number | null } {
  const method = fields.method;
  if (typeof method !== 'string' || !(METHODS as readonly string[]).includes(method))
    throw new ControlError(422, 'invalid_request', `method must be one of ${METHODS.join(', ')}`);
  if (fields.amount === undefined || fields.amount === null)
    return { method: method as PaymentMethod, amountCents: null };
  const amountCents = typeof fields.amount === 'number' ? paymentAmountCents(fields.amount) : null;
  if (amountCents === null)
    throw new ControlError(422, 'invalid_request', 'amount must be a positive number of reais with at most 2 decimals');
  return { method: method as PaymentMethod, amountCents };
}
