import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import type { Logger } from '@payments/logger';
import { paymentAmountCents } from '../domain/money';
import { OUR_NUMBER_DIGITS } from '../domain/slip-issuer';
import type { InterDb } from './db';
import { isUuid, type InterBank, type PaymentMethod } from './inter-bank';
import { chargeView } from './wire';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const PAY_PATH = /^\/sandbox\/charges\/([^/]+)\/pay\/?$/;
const METHODS: readonly PaymentMethod[] = ['boleto', 'pix', 'manual'];

export interface InterControlsDeps {
  db: InterDb;
  bank: InterBank;
  logger: Logger;
  /** Wakes the Inter webhook sender after a payment. */
  wake(): void;
}

/**
 * The Inter dialect's sandbox controls, on the sandbox's main (plain HTTP) port in front of its own app:
 *  - /sandbox/inter/**: set a client's next nossoNumero or account holder, make the next create slow or
 *    fail to issue, look at Inter charges and their webhooks;
 *  - POST /sandbox/charges/{id}/pay when id is an Inter codigoSolicitacao, or a nossoNumero only one Inter
 *    charge and no sandbox charge has (409 naming the candidates when several have it). Everything
 *    else goes to the sandbox's own app untouched (its body unread).
 */
export function withInterControls(main: Handler, deps: InterControlsDeps): Handler {
  const controls = createControlsApp(deps).callback();
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path.startsWith('/sandbox/inter/')) return void controls(req, res);
    const pay = req.method === 'POST' ? PAY_PATH.exec(path) : null;
    if (!pay) return main(req, res);
    routePay(deps, decodeURIComponent(pay[1]))
      .then((interPay) => (interPay ? controls(req, res) : main(req, res)))
      .catch((err: unknown) => {
        deps.logger.error({ err }, 'inter pay control failed');
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"code":"internal_error"}}');
      });
  };
}

/** Whether the pay control's id is the Inter dialect's to answer (an Inter charge, or an ambiguous number). */
async function routePay(deps: InterControlsDeps, id: string): Promise<boolean> {
  if (isUuid(id)) return (await deps.bank.payTarget(id, 0)).kind !== 'none';
  const ourNumber = ourNumberParam(id);
  const own = await deps.db
    .selectFrom('charges')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('our_number', '=', ourNumber)
    .executeTakeFirstOrThrow();
  return (await deps.bank.payTarget(ourNumber, Number(own.count))).kind !== 'none';
}

function createControlsApp(deps: InterControlsDeps): Koa {
  const app = new Koa();
  app.use(errors);
  app.use(bodyParser({ enableTypes: ['json'], strict: true }));
  const router = new Router();

  router.post('/sandbox/charges/:id/pay', async (ctx) => {
    const { method, amountCents } = paymentRequest(body(ctx));
    const id = isUuid(ctx.params.id) ? ctx.params.id : ourNumberParam(ctx.params.id);
    const own = isUuid(id)
      ? 0
      : Number(
          (
            await deps.db
              .selectFrom('charges')
              .select((eb) => eb.fn.countAll<number>().as('count'))
              .where('our_number', '=', id)
              .executeTakeFirstOrThrow()
          ).count,
        );
    const target = await deps.bank.payTarget(id, own);
    if (target.kind === 'none') return fail(ctx, 404, 'not_found', `no charge with id ${ctx.params.id}`);
    if (target.kind === 'ambiguous')
      return fail(
        ctx,
        409,
        'ambiguous_our_number',
        `our_number ${id} is held by several charges (Inter numbers are per account): pay by codigoSolicitacao`,
        { candidates: target.candidates },
      );
    const result = await deps.bank.pay(target.codigoSolicitacao, method, amountCents);
    if (result.outcome === 'not_found') return fail(ctx, 404, 'not_found', `no charge with id ${ctx.params.id}`);
    if (result.outcome === 'not_open')
      return fail(
        ctx,
        409,
        'charge_not_open',
        `charge ${ctx.params.id} is ${chargeView(result.charge).cobranca.situacao}`,
      );
    deps.logger.info({ codigoSolicitacao: target.codigoSolicitacao, method }, 'inter charge paid');
    if (result.notified) deps.wake();
    ctx.body = chargeView(result.charge);
  });

  router.post('/sandbox/inter/clients/:clientId/next-our-number', async (ctx) => {
    const value = body(ctx).value;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > 99_999_999_999)
      return fail(ctx, 422, 'invalid_request', 'value must be an integer from 1 to 99999999999');
    const client = await deps.bank.setNextOurNumber(ctx.params.clientId, value);
    ctx.body = { client_id: client.client_id, next_our_number: Number(client.next_our_number) };
  });

  router.put('/sandbox/inter/clients/:clientId/holder', async (ctx) => {
    const fields = body(ctx);
    const text = (name: string) =>
      typeof fields[name] === 'string' && fields[name] !== '' ? (fields[name] as string) : null;
    const [name, taxId, city, pixKey] = [text('name'), text('tax_id'), text('city'), text('pix_key')];
    if (!name || !taxId || !city || !pixKey)
      return fail(ctx, 422, 'invalid_request', 'name, tax_id, city and pix_key are required strings');
    const client = await deps.bank.setHolder(ctx.params.clientId, { name, tax_id: taxId, city, pix_key: pixKey });
    ctx.body = { client_id: client.client_id, account: client.account, holder: client.holder };
  });

  router.get('/sandbox/inter/behaviour', (ctx) => {
    ctx.body = behaviourBody(deps);
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
    if (slowOnce !== undefined) deps.bank.behaviour.slowOnceMs = slowOnce;
    if (issueDelay !== undefined) deps.bank.behaviour.issueDelayMs = issueDelay;
    if (failIssueOnce !== undefined) deps.bank.behaviour.failIssueOnce = failIssueOnce;
    ctx.body = behaviourBody(deps);
  });

  router.get('/sandbox/inter/charges', async (ctx) => {
    let query = deps.db.selectFrom('inter_charges').selectAll().orderBy('created_at');
    if (typeof ctx.query.client_id === 'string') query = query.where('client_id', '=', ctx.query.client_id);
    if (typeof ctx.query.seu_numero === 'string') query = query.where('seu_numero', '=', ctx.query.seu_numero);
    const rows = await query.limit(1_000).execute();
    ctx.body = { charges: rows.map((row) => ({ client_id: row.client_id, ...chargeView(row) })) };
  });

  router.get('/sandbox/inter/charges/:codigoSolicitacao', async (ctx) => {
    if (!isUuid(ctx.params.codigoSolicitacao)) return fail(ctx, 404, 'not_found', 'no such charge');
    const row = await deps.db
      .selectFrom('inter_charges')
      .selectAll()
      .where('codigo_solicitacao', '=', ctx.params.codigoSolicitacao)
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

  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

function behaviourBody(deps: InterControlsDeps) {
  const { slowOnceMs, issueDelayMs, failIssueOnce } = deps.bank.behaviour;
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

/** Digits shorter than 11 are zero-padded, as the sandbox's own controls do. */
function ourNumberParam(value: string): string {
  return /^\d{1,11}$/.test(value) ? value.padStart(OUR_NUMBER_DIGITS, '0') : value;
}

function body(ctx: Context): Record<string, unknown> {
  const value = (ctx.request as { body?: unknown }).body;
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

class ControlError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function fail(ctx: Context, status: number, code: string, message: string, extra: Record<string, unknown> = {}): void {
  ctx.status = status;
  ctx.body = { error: { code, message, ...extra } };
}

/** The sandbox's own error shape `{ error: { code, message } }` for the controls. */
async function errors(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) fail(ctx, 404, 'not_found', `no route ${ctx.method} ${ctx.path}`);
  } catch (err) {
    if (err instanceof ControlError) return fail(ctx, err.status, err.code, err.message);
    const status = (err as { status?: number }).status;
    if (status === 400) return fail(ctx, 400, 'malformed_json', 'the request body is not valid JSON');
    throw err;
  }
}
