import type { TLSSocket } from 'node:tls';
import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import {
  CancelChargeRequest,
  CreateChargeRequest,
  ListChargesQuery,
  TokenRequest,
  WebhookRegistration,
  INTER_SCOPES,
  interViolations,
  type ChargeList,
  type CreateChargeResponse,
  type ErrorBody,
  type InterViolation,
  type PdfResponse,
  type TokenResponse,
} from '@payments/inter-cobranca';
import { hasAtMostTwoDecimals } from '@payments/br-format';
import { isValidCnpj, isValidCpf } from '@payments/tax-id';
import type { Logger } from '@payments/logger';
import { planRegistration, type Behaviour } from '../domain/behaviour';
import { renderChargePdf } from '../domain/slip-pdf';
import { TOKEN_TTL_SECONDS, type InterBank } from './inter-bank';
import { chargeForPdf } from './terms';
import { chargeView } from './wire';

/** Every path of the dialect is under this prefix: an account's base_url is https://host:port/inter. */
export const INTER_PREFIX = '/inter';

export interface InterApiDeps {
  bank: InterBank;
  /** The sandbox's behaviour mode: "down" answers 503, "reject" refuses creates, "slow" delays them. */
  behaviour: Behaviour;
  slowMs: number;
  logger: Logger;
}

/** An Inter-style refusal: `{ title, status, detail, violacoes }`. */
export class InterApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly violations: InterViolation[] = [],
  ) {
    super(detail);
  }
}

interface InterState {
  clientId: string;
  scopes: string[];
}

/**
 * The Inter Cobrança v3 dialect of the bank sandbox (served over mutual TLS by listener.ts): OAuth2
 * client credentials, create/consult/list/cancel/pdf of "boleto com PIX" charges and webhook
 * registration, with Inter's paths, field names and error bodies. A token acts only for its client,
 * only over the client certificate it was issued over, and only within its scopes.
 */
export function createInterApiApp(deps: InterApiDeps): Koa {
  const app = new Koa();
  app.use(errorHandler(deps.logger));
  app.use(async (ctx, next) => {
    if (deps.behaviour.mode === 'down') throw new InterApiError(503, 'Service Unavailable', 'sandbox behaviour "down"');
    await next();
  });
  app.use(bodyParser({ enableTypes: ['json', 'form'], strict: true, jsonLimit: '1mb', formLimit: '16kb' }));
  const router = new Router({ prefix: INTER_PREFIX });
  mountToken(router, deps);
  mountWebhook(router, deps);
  mountCharges(router, deps);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

function mountToken(router: Router, { bank }: InterApiDeps): void {
  router.post('/oauth/v2/token', async (ctx) => {
    if (!ctx.is('application/x-www-form-urlencoded'))
      throw new InterApiError(400, 'Bad Request', 'the token request is application/x-www-form-urlencoded');
    const form = (ctx.request as { body?: unknown }).body;
    refuseViolations(interViolations(TokenRequest, form));
    const request = form as TokenRequest;
    if (!(await bank.checkSecret(request.client_id, request.client_secret)))
      throw new InterApiError(401, 'Unauthorized', 'invalid client credentials');
    const scopes = request.scope.split(' ').filter(Boolean);
    const token = await bank.issueToken(request.client_id, certFingerprint(ctx), scopes);
    const body: TokenResponse = {
      access_token: token,
      token_type: 'Bearer',
      expires_in: TOKEN_TTL_SECONDS,
      scope: scopes.join(' '),
    };
    ctx.body = body;
  });
}

function mountWebhook(router: Router, deps: InterApiDeps): void {
  const { bank } = deps;
  router.put('/cobranca/v3/cobrancas/webhook', authorized(deps, INTER_SCOPES.write), async (ctx) => {
    const body = (ctx.request as { body?: unknown }).body;
    refuseViolations(interViolations(WebhookRegistration, body));
    await bank.setWebhook(state(ctx).clientId, (body as WebhookRegistration).webhookUrl);
    ctx.status = 204;
  });
  router.get('/cobranca/v3/cobrancas/webhook', authorized(deps, INTER_SCOPES.read), async (ctx) => {
    const client = await bank.client(state(ctx).clientId);
    if (!client.webhook_url) throw new InterApiError(404, 'Not Found', 'no webhook registered');
    ctx.body = {
      webhookUrl: client.webhook_url,
      criacao: client.webhook_created_at?.toISOString(),
      atualizacao: client.webhook_updated_at?.toISOString(),
    };
  });
  router.delete('/cobranca/v3/cobrancas/webhook', authorized(deps, INTER_SCOPES.write), async (ctx) => {
    await bank.setWebhook(state(ctx).clientId, null);
    ctx.status = 204;
  });
}

function mountCharges(router: Router, deps: InterApiDeps): void {
  const { bank } = deps;
  router.post('/cobranca/v3/cobrancas', authorized(deps, INTER_SCOPES.write), async (ctx) => {
    const request = createRequest((ctx.request as { body?: unknown }).body);
    const plan = planRegistration(deps.behaviour.mode, request.pagador.nome);
    if (plan.outcome === 'fail') throw new InterApiError(503, 'Service Unavailable', 'sandbox: [sandbox:fail]');
    if (plan.outcome === 'reject')
      throw new InterApiError(400, 'Bad Request', 'Cobrança recusada pelo sandbox', [
        { path: '/pagador/nome', message: 'recusada (sandbox behaviour "reject")' },
      ]);
    const row = await bank.create(state(ctx).clientId, request);
    // Stored first, answered late: a client that gives up in the meantime has a charge it did not hear of.
    const slowOnce = bank.behaviour.slowOnceMs;
    bank.behaviour.slowOnceMs = 0;
    const delay = Math.max(slowOnce, plan.slow ? deps.slowMs : 0);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const body: CreateChargeResponse = { codigoSolicitacao: row.codigo_solicitacao };
    ctx.body = body;
  });

  router.get('/cobranca/v3/cobrancas', authorized(deps, INTER_SCOPES.read), async (ctx) => {
    const query = { ...ctx.query };
    refuseViolations(interViolations(ListChargesQuery, query));
    const rows = await bank.list(state(ctx).clientId, query as ListChargesQuery);
    const body: ChargeList = {
      totalPaginas: 1,
      totalElementos: rows.length,
      ultimaPagina: true,
      primeiraPagina: true,
      tamanhoPagina: Math.max(rows.length, 1),
      numeroDeElementos: rows.length,
      cobrancas: rows.map((row) => chargeView(row)),
    };
    ctx.body = body;
  });

  router.get('/cobranca/v3/cobrancas/:codigoSolicitacao', authorized(deps, INTER_SCOPES.read), async (ctx) => {
    ctx.body = chargeView(await found(deps, ctx));
  });

  router.post(
    '/cobranca/v3/cobrancas/:codigoSolicitacao/cancelar',
    authorized(deps, INTER_SCOPES.write),
    async (ctx) => {
      const body = (ctx.request as { body?: unknown }).body;
      refuseViolations(interViolations(CancelChargeRequest, body));
      const result = await bank.cancel(
        state(ctx).clientId,
        ctx.params.codigoSolicitacao,
        (body as CancelChargeRequest).motivoCancelamento,
      );
      if (result === 'not_found') throw notFound(ctx.params.codigoSolicitacao);
      if (result === 'not_open')
        throw new InterApiError(409, 'Conflict', 'a cobrança não está em situação que permita cancelamento');
      ctx.status = 202;
      ctx.body = ''; // no content, but 202 (koa would write "Accepted")
    },
  );

  router.get('/cobranca/v3/cobrancas/:codigoSolicitacao/pdf', authorized(deps, INTER_SCOPES.read), async (ctx) => {
    const row = await found(deps, ctx);
    if (!row.nosso_numero) throw new InterApiError(400, 'Bad Request', `a cobrança está ${row.situacao}: sem boleto`);
    const { payee } = await bank.pdfParts(row);
    const pdf = await renderChargePdf(chargeForPdf(row), payee);
    const body: PdfResponse = { pdf: pdf.toString('base64') };
    ctx.body = body;
  });
}

/** The create body, checked against the contract and for what a schema cannot say (CPF/CNPJ digits, exact cents). */
function createRequest(body: unknown): CreateChargeRequest {
  refuseViolations(interViolations(CreateChargeRequest, body));
  const request = body as CreateChargeRequest;
  const violations: InterViolation[] = [];
  if (!hasAtMostTwoDecimals(request.valorNominal))
    violations.push({ path: '/valorNominal', message: 'deve ter no máximo 2 casas decimais' });
  const { cpfCnpj, tipoPessoa } = request.pagador;
  const valid = tipoPessoa === 'FISICA' ? isValidCpf(cpfCnpj) : isValidCnpj(cpfCnpj);
  if (!valid)
    violations.push({
      path: '/pagador/cpfCnpj',
      message: `não é um ${tipoPessoa === 'FISICA' ? 'CPF' : 'CNPJ'} válido`,
    });
  refuseViolations(violations);
  return request;
}

async function found(deps: InterApiDeps, ctx: Context) {
  const row = await deps.bank.find(state(ctx).clientId, ctx.params.codigoSolicitacao);
  if (!row) throw notFound(ctx.params.codigoSolicitacao);
  return row;
}

function notFound(codigoSolicitacao: string): InterApiError {
  return new InterApiError(404, 'Not Found', `cobrança ${codigoSolicitacao} não encontrada`);
}

/** Bearer token of this client certificate, with the scope the operation needs. */
function authorized(deps: InterApiDeps, scope: string) {
  return async (ctx: Context, next: Next) => {
    const token = /^Bearer (\S+)$/i.exec(ctx.get('authorization'))?.[1];
    const client = token ? await deps.bank.authenticate(token, certFingerprint(ctx)) : null;
    if (!client) throw new InterApiError(401, 'Unauthorized', 'token ausente, inválido ou expirado');
    if (!client.scopes.includes(scope)) throw new InterApiError(403, 'Forbidden', `escopo ${scope} necessário`);
    (ctx.state as { inter?: InterState }).inter = client;
    await next();
  };
}

function state(ctx: Context): InterState {
  const inter = (ctx.state as { inter?: InterState }).inter;
  if (!inter) throw new Error('route without authorized()');
  return inter;
}

/** SHA-256 fingerprint of the client certificate of this connection (mutual TLS guarantees there is one). */
function certFingerprint(ctx: Context): string {
  const cert = (ctx.req.socket as TLSSocket).getPeerCertificate?.();
  if (!cert || !cert.fingerprint256) throw new InterApiError(401, 'Unauthorized', 'certificado de cliente ausente');
  return cert.fingerprint256;
}

function refuseViolations(violations: InterViolation[]): void {
  if (violations.length > 0)
    throw new InterApiError(400, 'Bad Request', 'Existem campos inválidos na requisição', violations);
}

function errorHandler(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined)
        throw new InterApiError(404, 'Not Found', `no route ${ctx.method} ${ctx.path}`);
    } catch (err) {
      const failure = toInterError(err);
      if (failure.status >= 500 && failure.title === 'Internal Server Error')
        logger.error({ err, path: ctx.path }, 'inter dialect request failed');
      const body: ErrorBody = {
        title: failure.title,
        status: failure.status,
        detail: failure.detail,
        timestamp: new Date().toISOString(),
        ...(failure.violations.length > 0
          ? {
              violacoes: failure.violations.map((v) => ({
                razao: v.message,
                propriedade: v.path.replace(/^\//, '').replace(/\//g, '.'),
              })),
            }
          : {}),
      };
      ctx.status = failure.status;
      ctx.type = 'application/problem+json';
      ctx.body = JSON.stringify(body);
    }
  };
}

function toInterError(err: unknown): InterApiError {
  if (err instanceof InterApiError) return err;
  const status = (err as { status?: number }).status;
  if (typeof status === 'number' && status >= 400 && status < 500)
    return new InterApiError(status, 'Bad Request', (err as Error).message);
  return new InterApiError(500, 'Internal Server Error', 'an unexpected error occurred');
}
